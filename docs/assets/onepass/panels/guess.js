/**
 * Step 4, "You guess": the reader is the draft. One pass checks every guessed token against the model's own
 * prediction; tokens are kept up to the first disagreement, where the model's token replaces the rest, and a
 * guess right throughout earns the token after it for free (the bonus).
 */
import { runtime } from '../runtime/client.js';
import { cachedOr } from './cache.js';
import { DEFAULTS } from './defaults.js';
import { button, el, ms, visible } from './dom.js';
import { modelStatus, recordLastPass, traces } from './model.js';
import { legend, passTokens } from './passview.js';
import { runningClock, TRACE_NOTE } from './runs.js';

export const DEFAULT_PROMPT = DEFAULTS.guess.text;
const TRIES = {
  early: { label: 'Fails early', guess: ' Munich, the largest city of Bavaria' },
  right: { label: 'Right throughout', guess: null }, // the model's own continuation, computed
  spacing: { label: 'Wrong spacing', guess: 'Berlin.' }, // no leading space: a different token from " Berlin"
};
const CONTINUATION_TOKENS = DEFAULTS.guess.continuationTokens;

export function mountGuess(root) {
  const rt = runtime();
  const prompt = el('textarea', { className: 'onepass-text', rows: 2, value: DEFAULT_PROMPT, ariaLabel: 'Text' });
  const guess = el('input', { className: 'onepass-guess', type: 'text', value: DEFAULTS.guess.guess, ariaLabel: 'Your guess' });
  const kv = el('input', { type: 'checkbox', className: 'onepass-kv', checked: true });
  const check = button('Check my guess', 'onepass-run', true);
  const tries = Object.entries(TRIES).map(([key, t]) => button(t.label, `onepass-try onepass-try--${key}`));
  const model = modelStatus(root);
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
  let running = false;

  function draw(outcome, source) {
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
    root.dataset.source = source;
    root.dataset.state = 'done';
  }

  async function verify() {
    if (running) return model.say('A check is already running: wait for it to finish.');
    if (!prompt.value.trim()) return model.say('The text is empty: type a few words first.');
    if (!guess.value.trim()) return model.say('The guess is empty: type the words you expect next.');
    const request = { text: prompt.value, guess: guess.value, kvCache: kv.checked };
    running = true;
    root.dataset.state = 'running';
    note.textContent = '';
    const clock = runningClock(model.say, { reading: (n) => `Checking your guess: one pass over ${n.toLocaleString('en')} tokens` });
    try {
      const { value: outcome, fromCache } = await cachedOr('guess', request, async () => {
        model.say('Checking…');
        const info = await model.ready();
        const live = await rt.verify(request.text, request.guess, request.kvCache, clock.event);
        recordLastPass([live.pass], info);
        return live;
      });
      model.say(fromCache ? 'From cache: this exact check was done before with this model.' : 'Checked in one pass.');
      draw(outcome, fromCache ? 'cache' : 'live');
      showKv(request, outcome.pass);
    } catch (err) {
      model.say(`The check failed: ${err.message}`);
      root.dataset.state = 'error';
    } finally {
      clock.stop();
      running = false;
    }
  }

  const byKv = {};
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
    const run = await rt.generate({ text: prompt.value, mode: 'greedy', kvCache: true, maxNew: CONTINUATION_TOKENS });
    return run.text;
  }

  check.addEventListener('click', verify);
  // Enter in the one-line guess box checks it, as it would submit a form.
  guess.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.isComposing) verify();
  });
  tries.forEach((b, i) => b.addEventListener('click', async () => {
    const key = Object.keys(TRIES)[i];
    if (running) return model.say('A check is already running: wait for it to finish.');
    try {
      guess.value = TRIES[key].guess ?? await continuation();
    } catch (err) {
      return model.say(`Could not compute the model's own continuation: ${err.message}`);
    }
    verify();
  }));

  traces().then((all) => {
    const trace = all.guess;
    if (!trace || root.dataset.source || rt.info) return; // live runs only, once the model is here
    prompt.value = trace.request.text;
    guess.value = trace.request.guess;
    draw(trace.outcome, 'trace');
    root.dataset.state = 'loading';
    note.textContent = TRACE_NOTE;
  });
}
