/**
 * Mounts everything a page holds: every `<div data-onepass-panel="…">` (the model's panels), every
 * `<div data-onepass-widget="…">` (the speed-up chart, the quiz, the pass cost: no model needed), the
 * visited-steps strip, and the maths. Material's `document$` emits on every page it shows, including instant
 * navigation, so this one subscription mounts whatever the new page holds; a panel or widget whose page was left
 * gets its cleanup (a chart destroyed, a download no longer watched), which its mount function may return. All
 * text is set with textContent, so nothing typed or generated is read as HTML.
 */
import { leavePage, runtime } from './runtime/client.js';
import { mountAllAtOnce } from './panels/allatonce.js';
import { mountDraftModel } from './panels/draftmodel.js';
import { mountGenerate } from './panels/generate.js';
import { mountGreedy } from './panels/greedy.js';
import { mountGuess } from './panels/guess.js';
import { mountLookup } from './panels/lookup.js';
import { mountModelCard } from './panels/modelcard.js';
import { mountSampling } from './panels/sampling.js';
import { mountChart } from './widgets/speedup-chart.js';
import { mountQuiz } from './widgets/quiz.js';
import { mountPassCost } from './widgets/pass-cost.js';
import { mountStrip } from './widgets/strip.js';
import { typeset } from './maths.js';

const PANELS = {
  generate: mountGenerate,
  'model-card': mountModelCard,
  greedy: mountGreedy,
  'all-at-once': mountAllAtOnce,
  guess: mountGuess,
  lookup: mountLookup,
  sampling: mountSampling,
  'draft-model': mountDraftModel,
};
const WIDGETS = { 'speedup-chart': mountChart, quiz: mountQuiz, 'pass-cost': mountPassCost };
const cleanups = new Map(); // mounted root -> what to undo when its page is left

/** Mount `root` with `mount` (which may be async, and may return its cleanup); a failure is said in its place. */
function start(root, mount, noun) {
  root.dataset.mounted = '';
  Promise.resolve().then(() => mount?.(root)).then((cleanup) => {
    if (typeof cleanup === 'function') cleanups.set(root, cleanup);
  }).catch((err) => {
    root.textContent = `This ${noun} could not start: ${err.message}`;
  });
}

/** Mount what the current page holds (also called by the tests after adding a panel by hand). */
function mountAll() {
  for (const [root, cleanup] of cleanups) {
    if (!root.isConnected) {
      cleanup();
      cleanups.delete(root);
    }
  }
  mountStrip();
  for (const root of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-onepass-panel]:not([data-mounted])'))) {
    root.classList.add('onepass-panel');
    start(root, PANELS[root.dataset.onepassPanel], 'panel');
  }
  for (const root of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('[data-onepass-widget]:not([data-mounted])'))) {
    start(root, WIDGETS[root.dataset.onepassWidget], 'widget');
  }
  typeset().catch((err) => console.warn('maths left as source:', err.message));
}

document$.subscribe(() => {
  leavePage(); // the runs a page left behind are cancelled: the worker is free for this page's
  window.onepass = runtime; // for the browser tests and the benchmark
  window.onepassMount = mountAll;
  mountAll();
});
