/**
 * Mounts the widgets that need no model — the visited-steps strip on every page, the speed-up chart
 * (step 6), the quiz (step 8), the pass cost (home) — and typesets the maths. Material's `document$`
 * emits on every page it shows, including instant navigation, so everything is (re)mounted there and
 * whatever the previous page left (a chart) is released.
 */
import { mountStrip } from './strip.js';
import { mountChart, releaseChart } from './speedup-chart.js';
import { mountQuiz } from './quiz.js';
import { mountPassCost } from './pass-cost.js';
import { typeset } from './maths.js';

const WIDGETS = { 'speedup-chart': mountChart, quiz: mountQuiz, 'pass-cost': mountPassCost };

document$.subscribe(() => {
  releaseChart();
  mountStrip();
  for (const root of document.querySelectorAll('[data-onepass-widget]:not([data-mounted])')) {
    root.dataset.mounted = '';
    Promise.resolve().then(() => WIDGETS[root.dataset.onepassWidget]?.(root)).catch((err) => {
      root.textContent = `This widget could not start: ${err.message}`;
    });
  }
  typeset().catch((err) => console.warn('maths left as source:', err.message));
});
