/**
 * "Under the hood": any text, either mode, every pass listed with its time; after a live run, where the run's
 * time went (breakdown.js). "Profile" runs step 5's Capitals example with prompt lookup, always live, so the
 * breakdown is measured again on this machine.
 */
import { button, el } from '../dom.js';
import { breakdownTable, summarise } from './breakdown.js';
import { DEFAULTS } from './defaults.js';
import { runFrame } from './runs.js';

/** @import { GenerateRequest } from '../runtime/contract.js' */

const MODES = { greedy: 'One token per pass (greedy)', lookup: 'Prompt lookup (copy and check)' };
const { text: DEFAULT_TEXT, maxNew: MAX_NEW, profiled: PROFILED } = DEFAULTS.generate;

export function mountGenerate(root) {
  const frame = runFrame(root, { panel: 'generate', text: root.dataset.text ?? DEFAULT_TEXT, details: true });
  const mode = el('select', { className: 'onepass-mode' }, Object.entries(MODES).map(([value, label]) => el('option', { value, textContent: label })));
  const profile = button('Profile step 5\'s Capitals run', 'onepass-profile');
  const breakdown = el('div', { className: 'onepass-breakdown' });
  frame.run.before(el('label', {}, ['Mode ', mode]));
  frame.cancel.before(profile);
  frame.extra.append(breakdown);

  /** After a run: its breakdown when it ran live, a word when it came from the cache, nothing when it failed. */
  function show(outcome, request) {
    if (!outcome) return;
    if (!outcome.timing?.passes.length) {
      breakdown.append(el('p', { className: 'onepass-breakdown-note', textContent: 'This run was done before in this tab and came '
        + `from the cache, so nothing was timed: change the text or the mode to time a new one, or press "${profile.textContent}".` }));
      root.dataset.breakdown = 'cached';
      return;
    }
    breakdown.append(breakdownTable(summarise(outcome.timing), { threads: frame.rt.info?.threads ?? 1, kvCache: request.kvCache }));
    root.dataset.breakdown = 'shown';
  }

  /** A new run begins: the last one's breakdown no longer describes what the panel shows. */
  function clear() {
    delete root.dataset.breakdown;
    breakdown.replaceChildren();
  }

  frame.run.addEventListener('click', async () => {
    if (!frame.isRunning()) clear();
    /** @type {Partial<GenerateRequest>} */
    const request = { text: frame.input.value, mode: mode.value, kvCache: frame.kv.checked, maxNew: MAX_NEW };
    show(await frame.execute(request), request);
  });
  profile.addEventListener('click', async () => {
    if (frame.busy()) return;
    const example = DEFAULTS.lookup.examples.find((e) => e.key === PROFILED);
    clear();
    [frame.input.value, mode.value] = [example.prompt, 'lookup'];
    /** @type {Partial<GenerateRequest>} */
    const request = { text: example.prompt, mode: 'lookup', kvCache: frame.kv.checked, maxNew: example.max_new };
    show(await frame.execute(request, { fresh: true }), request);
  });
}
