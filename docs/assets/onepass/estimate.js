/**
 * The reader's alpha and c from a step-5 run, mirroring py/onepass/estimate.py (the site tests compare the two
 * on recorded runs; the reasons for each choice are in its docstring).
 *
 * Both are fitted so that the speed-up formula at the run's draft length gamma reproduces the run: alpha gives
 * its tokens per pass, c (per drafted token, in one-token passes) its time per token. The first pass of each run
 * reads the prompt and is left out of both.
 */
import { expectedTokens } from './speedup.js';

const BISECTIONS = 60; // halvings of [0, 1]: far below a float's resolution of alpha

const sum = (values) => values.reduce((a, b) => a + b, 0);

/** What the formula is fitted to, from a drafted run and its one-at-a-time reference; null if nothing to fit. */
export function measured(run, reference, proposerSeconds, maxDraft = 0) {
  const rounds = run.passes.slice(1);
  const singles = reference.passes.slice(1);
  const gamma = Math.max(maxDraft, ...rounds.map((p) => p.draft.length));
  if (!rounds.length || !singles.length || gamma === 0) return null;
  return {
    gamma,
    passes: rounds.length,
    tokens: sum(rounds.map((p) => p.added.length)),
    // Drafting time is only recorded for the whole run; the first pass's share is a single lookup.
    seconds: sum(rounds.map((p) => p.seconds)) + proposerSeconds,
    greedyPasses: singles.length,
    greedySeconds: sum(singles.map((p) => p.seconds)),
  };
}

/** The alpha at which a draft of `gamma` tokens yields `tokensPerPass` per pass on average. */
export function alphaFor(tokensPerPass, gamma) {
  if (!(gamma >= 1)) throw new RangeError(`alpha means nothing without a draft: gamma = ${gamma}`);
  // Tokens per pass rise with alpha from 1 (alpha = 0) to gamma + 1 (alpha = 1): halve the interval.
  let low = 0;
  let high = 1;
  for (let i = 0; i < BISECTIONS; i += 1) {
    const middle = (low + high) / 2;
    if (expectedTokens(middle, gamma) < tokensPerPass) low = middle;
    else high = middle;
  }
  return (low + high) / 2;
}

/** The alpha and c at which the formula reproduces a `measured()` run. */
export function fit(m) {
  const passSeconds = m.greedySeconds / m.greedyPasses;
  const roundPasses = m.seconds / m.passes / passSeconds; // a round's time, counted in one-token passes
  return { alpha: alphaFor(m.tokens / m.passes, m.gamma), c: Math.max(0, (roundPasses - 1) / m.gamma), gamma: m.gamma };
}
