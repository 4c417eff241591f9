/**
 * Step 4, "You guess": the reader is the draft. One pass checks every guessed token against the model's own
 * prediction; tokens are kept up to the first disagreement, where the model's token replaces the rest, and a
 * guess right throughout earns the token after it for free (the bonus).
 */
import { DEFAULTS } from './defaults.js';
import { button, el, ms, visible } from '../dom.js';
import { recordLastPass, traces } from './model.js';
import { legend, passTokens } from './passview.js';
import { panelRunner, quietRun } from './runs.js';

/** @import { PassRow, VerifyRequest, VerifyResult } from '../runtime/contract.js' */

export const DEFAULT_PROMPT = DEFAULTS.guess.text;
const TRIES = {
  early: { label: 'Fails early', guess: DEFAULTS.guess.tries.early },
  right: { label: 'Right throughout', guess: null }, // the model's own continuation, computed
  spacing: { label: 'Wrong spacing', guess: DEFAULTS.guess.tries.spacing },
};
const CONTINUATION_TOKENS = DEFAULTS.guess.continuationTokens;
const WORDS = {
  busy: 'A check is already running: wait for it to finish.',
  running: 'Checking…',
  done: 'Checked in one pass.',
  cached: 'From cache: this exact check was done before with this model.',
  failed: 'The check failed',
  reading: (n) => `Checking your guess: one pass over ${n.toLocaleString('en')} tokens`,
};

export function mountGuess(root) {
  const prompt = el('textarea', { className: 'onepass-text', rows: 2, value: DEFAULT_PROMPT, ariaLabel: 'Text' });
  const guess = el('input', { className: 'onepass-guess', type: 'text', value: DEFAULTS.guess.guess, ariaLabel: 'Your guess' });
  const kv = el('input', { type: 'checkbox', className: 'onepass-kv', checked: true });
  const check = button('Check my guess', 'onepass-run', true);
  const tries = Object.entries(TRIES).map(([key, t]) => button(t.label, `onepass-try onepass-try--${key}`));
  const runner = panelRunner(root, { panel: 'guess', words: WORDS,
    refuse: (request) => (request.guess.trim() ? '' : 'The guess is empty: type the words you expect next.') });
  const { rt, model } = runner;
  const verdict = el('p', { className: 'onepass-verdict' });
  const tokens = el('p', { className: 'onepass-pass' });
  const note = el('p', { className: 'onepass-note' });
  const kvLine = el('p', { className: 'onepass-kvline' });
  root.append(
    el('label', {}, ['Text ', prompt]),
    el('label', { className: 'onepass-guess-label' }, ['Your guess of what comes next ', guess]),
    el('div', { className: 'onepass-controls' }, [el('label', {}, [kv, ' KV cache']), check, model.retry]),
    el('div', { className: 'onepass-controls onepass-tries' }, ['Try: ', ...tries]),
    model.status, legend(['accepted', 'rejected', 'corrected', 'bonus']), note, tokens, verdict, kvLine,
  );

  /** @param {VerifyResult} outcome */
  function draw(outcome) {
    const { pass, labels } = outcome;
    tokens.replaceChildren(...passTokens(pass, labels));
    const n = pass.draft.length;
    const kept = `${pass.accepted} of ${n} guessed token${n > 1 ? 's' : ''} accepted`;
    const model = `"${visible(labels[pass.token])}"`;
    verdict.textContent = pass.bonus
      ? `All ${n} right, and the bonus token ${model} came free: this one pass wrote ${pass.added.length} tokens (${ms(pass.seconds)}).`
      : `${kept}; at the first disagreement the model writes ${model} instead. This pass still wrote ${pass.added.length} token${pass.added.length > 1 ? 's' : ''} (${ms(pass.seconds)}).`;
    root.dataset.accepted = pass.accepted;
    root.dataset.bonus = pass.bonus;
  }

  function verify() {
    const fields = { text: prompt.value, guess: guess.value, kvCache: kv.checked };
    return runner.execute('verify', fields, {
      start: () => { note.textContent = ''; },
      live: async (asked, { onEvent, info, run }) => {
        const outcome = await run(onEvent);
        recordLastPass([outcome.pass], info);
        return outcome;
      },
      draw: (outcome) => {
        draw(outcome);
        showKv(fields, outcome.pass);
      },
    });
  }

  const byKv = {};
  /**
   * @param {VerifyRequest} request
   * @param {PassRow} pass
   */
  function showKv(request, pass) {
    const key = request.text + '\u0000' + request.guess;
    byKv[request.kvCache] = { key, pass };
    const part = (on) => (byKv[on]?.key === key ? `${on ? 'on' : 'off'}: 1 pass, ${ms(byKv[on].pass.seconds)}` : `${on ? 'on' : 'off'}: not run`);
    kvLine.textContent = `KV cache ${part(true)} · ${part(false)}. One pass either way; the cache matters once passes follow each other.`;
  }

  /** The model's own next tokens after the text: a guess that is right throughout. */
  async function continuation() {
    const trace = (await traces()).guess;
    if (trace && prompt.value === trace.request.text && !rt.info) return trace.continuation;
    await model.ready();
    return (await quietRun('guess', { text: prompt.value, mode: 'greedy', kvCache: true, maxNew: CONTINUATION_TOKENS })).text;
  }

  check.addEventListener('click', verify);
  // Enter in the one-line guess box checks it, as it would submit a form.
  guess.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.isComposing) verify();
  });
  tries.forEach((b, i) => b.addEventListener('click', async () => {
    const key = Object.keys(TRIES)[i];
    if (runner.busy()) return;
    try {
      guess.value = TRIES[key].guess ?? await continuation();
    } catch (err) {
      return model.say(`Could not compute the model's own continuation: ${err.message}`);
    }
    verify();
  }));

  runner.showTrace('guess', (trace, recorded) => {
    prompt.value = trace.request.text;
    guess.value = trace.request.guess;
    draw(trace.outcome);
    note.textContent = recorded;
  });
}
