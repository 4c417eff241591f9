/**
 * Step 3, "All at once": one pass over the reader's text gives, under every token, the model's prediction
 * of the token after it (top-1 shown, top-k with probabilities on hover and on click). A measure button times
 * a pass over a few tokens against a pass over many, to show that a pass costs about the same either way.
 * (No KV cache toggle here: a single pass from an empty cache is the same with it on or off.)
 */
import { request } from '../runtime/client.js';
import { DEFAULTS } from './defaults.js';
import { button, el, visible } from '../dom.js';
import { panelRunner } from './runs.js';
import { widePassReadout } from '../widgets/pass-cost.js';

/** @import { PredictResult } from '../runtime/contract.js' */

export const DEFAULT_TEXT = DEFAULTS['all-at-once'].text;
const { measureSizes: SIZES, measureRuns: RUNS } = DEFAULTS['all-at-once'];
const SHOWN = 3; // predictions listed per position
const WORDS = {
  busy: 'A pass is already running: wait for it to finish.',
  running: 'Running one pass…',
  done: `One pass, a prediction under every token. Click a token for the model's top ${SHOWN}.`,
  cached: 'From cache: this exact pass was done before with this model.',
  failed: 'The pass failed',
  reading: (n) => `One pass over your ${n.toLocaleString('en')}-token text`,
};

export function mountAllAtOnce(root) {
  const input = el('textarea', { className: 'onepass-text', rows: 2, value: DEFAULT_TEXT, ariaLabel: 'Your text' });
  const run = button('Run one pass', 'onepass-run', true);
  const measureButton = button(`Measure: ${SIZES[0]} tokens vs ${SIZES[1]}`, 'onepass-measure');
  const runner = panelRunner(root, { panel: 'all-at-once', words: WORDS });
  const { rt, model } = runner;
  const note = el('p', { className: 'onepass-note' });
  const grid = el('div', { className: 'onepass-grid' });
  const summary = el('p', { className: 'onepass-counters' });
  const measured = el('p', { className: 'onepass-measured' });
  root.append(input, el('div', { className: 'onepass-controls' }, [run, measureButton, model.retry]),
    model.status, note, grid, summary, measured);

  /** @param {PredictResult} result */
  function draw(result) {
    const label = (id) => result.labels[id] ?? `#${id}`;
    grid.replaceChildren(...result.ids.map((id, i) => {
      const top = result.topkIds[i].slice(0, SHOWN).map((t, j) => `${visible(label(t))} ${(100 * result.topkProbs[i][j]).toFixed(1)} %`);
      const next = el('span', { className: 'onepass-next', textContent: visible(label(result.argmax[i])), title: `the model's top ${SHOWN} next tokens: ${top.join(' · ')}` });
      const more = el('ol', { className: 'onepass-topk', hidden: true }, top.map((t) => el('li', { textContent: t })));
      const cell = el('button', { type: 'button', className: 'onepass-cell' }, [el('span', { className: 'onepass-cell-token', textContent: visible(label(id)) }), next, more]);
      cell.addEventListener('click', () => { more.hidden = !more.hidden; });
      return cell;
    }));
    summary.textContent = `${result.ids.length} tokens, ${result.ids.length} predictions, 1 pass, ${(result.seconds * 1000).toFixed(1)} ms.`;
  }

  const once = () => runner.execute('predict', { text: input.value }, {
    start: () => { note.textContent = ''; },
    draw,
  });

  // Not a run to cache or draw, but it takes the worker as one: the runner keeps the two apart.
  const measure = () => runner.exclusive({ text: input.value }, async () => {
    measured.textContent = 'Measuring…';
    try {
      await model.ready();
      const result = await rt.run('measure', request('measure', { text: input.value, sizes: SIZES, runs: RUNS }));
      const [a, b] = SIZES.map((n) => result.ms[n]);
      measured.textContent = widePassReadout({ narrow: SIZES[0], wide: SIZES[1], a, b, runs: result.runs,
        threads: result.threads });
      root.dataset.measured = 'yes';
    } catch (err) {
      measured.textContent = `The measurement failed: ${err.message}`;
    }
  });

  run.addEventListener('click', once);
  measureButton.addEventListener('click', measure);
  runner.showTrace('all-at-once', (trace, recorded) => {
    input.value = trace.request.text;
    draw(trace.result);
    note.textContent = recorded;
  });
}
