/**
 * Mounts every `<div data-onepass-panel="…">` on the page. Material's `document$` emits on every page
 * load, including instant navigation, so panels appear on whichever page holds them; a panel whose page
 * was left gets its cleanup (e.g. its chart destroyed). All text is set with textContent, so nothing typed
 * or generated is read as HTML.
 */
import { runtime } from './runtime/client.js';
import { mountAllAtOnce } from './panels/allatonce.js';
import { mountGenerate } from './panels/generate.js';
import { mountGreedy } from './panels/greedy.js';
import { mountGuess } from './panels/guess.js';
import { mountLookup } from './panels/lookup.js';
import { mountModelCard } from './panels/modelcard.js';
import { mountSampling } from './panels/sampling.js';

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
