/**
 * What passes cost here. The home page's widget: the median one-token pass time that the last model run left
 * in `onepass.lastPass`, or a pointer to step 2, which measures it. And step 3's Measure readout, a narrow pass
 * against a wide one, kept here as a pure function so that its arithmetic is tested on fixed timings.
 */
import { KEYS, SITE_ROOT, finite, read } from '../store.js';
import { el } from '../dom.js';

const MS_PER_SECOND = 1000;

export function mountPassCost(root) {
  const last = read(KEYS.lastPass);
  const ms = finite(last?.ms);
  const threads = finite(last?.threads);
  const model = typeof last?.model === 'string' ? last.model : 'the model';
  const step2 = el('a', { href: new URL('one-at-a-time/', SITE_ROOT).href, textContent: 'Step 2' });
  if (ms === null || ms <= 0) {
    root.replaceChildren(el('p', {}, [step2, ' measures what one pass costs on this device, the moment you run its panel.']));
    return;
  }
  const threadText = threads === null ? '' : `, ${threads} thread${threads === 1 ? '' : 's'}`;
  root.replaceChildren(el('p', {}, [
    el('strong', { textContent: `A pass costs about ${ms.toFixed(0)} ms here.` }),
    ` That is the median time of a one-token pass of ${model} in this browser on your last run${threadText} — at most `
      + `${(MS_PER_SECOND / ms).toFixed(1)} tokens a second, one at a time. `,
    step2, ' measures it again whenever you run its panel.',
  ]));
}

/**
 * Step 3's sentence on a pass over `narrow` tokens taking `a` ms against one over `wide` tokens taking `b` ms.
 * The wide pass's tokens, read as wide / narrow passes over `narrow` tokens each, would cost (wide / narrow) · a;
 * one wide pass costs b, so per token it is (wide / narrow) · a / b times cheaper.
 */
export function widePassReadout({ narrow, wide, a, b, runs, threads }) {
  const passes = wide / narrow;
  return `A pass over ${narrow} tokens: ${a.toFixed(1)} ms; over ${wide} tokens: ${b.toFixed(1)} ms `
    + `(median of ${runs} runs each, ${threads} thread${threads > 1 ? 's' : ''}). `
    + `${passes}× the tokens cost ${(b / a).toFixed(2)}× the time in this tab: `
    + `${(passes * a / b).toFixed(1)}× cheaper per token than ${passes} passes over ${narrow}.`;
}
