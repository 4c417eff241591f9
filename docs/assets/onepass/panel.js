/**
 * Mounts every `<div data-onepass-panel="…">` on the page. Material's `document$` emits on every page
 * load, including instant navigation, so panels appear on whichever page holds them; a panel whose page
 * was left gets its cleanup (e.g. its chart destroyed). All text is set with textContent, so nothing typed
 * or generated is read as HTML.
 */
import { runtime } from './client.js';
import { el } from './panels/dom.js';
import { mountAllAtOnce } from './panels/allatonce.js';
import { mountGreedy } from './panels/greedy.js';
import { mountGuess } from './panels/guess.js';
import { mountLookup } from './panels/lookup.js';
import { mountModelCard } from './panels/modelcard.js';
import { runFrame } from './panels/runs.js';
import { mountSampling } from './panels/sampling.js';

const MODES = { greedy: 'One token per pass (greedy)', lookup: 'Prompt lookup (copy and check)' };
const MAX_NEW = 24;

/** The runtime page's panel: any text, either mode. */
function mountGenerate(root) {
  const frame = runFrame(root, { panel: 'generate', text: root.dataset.text ?? 'The capital of France is Paris. The capital of Italy is', details: true });
  const mode = el('select', { className: 'onepass-mode' }, Object.entries(MODES).map(([value, label]) => el('option', { value, textContent: label })));
  frame.run.before(el('label', {}, ['Mode ', mode]));
  frame.run.addEventListener('click', () => frame.execute({ text: frame.input.value, mode: mode.value, kvCache: frame.kv.checked, maxNew: MAX_NEW }));
}

const PANELS = {
  generate: mountGenerate,
  'model-card': mountModelCard,
  greedy: mountGreedy,
  'all-at-once': mountAllAtOnce,
  guess: mountGuess,
  lookup: mountLookup,
  sampling: mountSampling,
};
const cleanups = new Map(); // mounted root -> what to undo when its page is left

/** Mount the panels of the current page (also called by the tests after adding a panel by hand). */
function mountAll() {
  for (const [root, cleanup] of cleanups) {
    if (!root.isConnected) {
      cleanup();
      cleanups.delete(root);
    }
  }
  for (const root of document.querySelectorAll('[data-onepass-panel]:not([data-mounted])')) {
    root.dataset.mounted = '';
    root.classList.add('onepass-panel');
    const cleanup = PANELS[root.dataset.onepassPanel]?.(root);
    if (typeof cleanup === 'function') cleanups.set(root, cleanup);
  }
}

document$.subscribe(() => {
  window.onepass = runtime; // for the browser tests and the benchmark
  window.onepassMount = mountAll;
  mountAll();
});
