/**
 * Step 6's sampling panel. Draft and verify 10,000 tokens with the speculative sampling rule
 * (py/onepass/sampling.py), then compare the kept tokens' frequencies with the target p: a chart, a table and
 * a chi-squared verdict. Two sources of p and q:
 * - presets over six made-up words (Python only, no model), with every p and q editable. Until the reader presses a
 *   button, the panel shows the preset as the build drew it at the first seed (SAMPLING_DRAWN, by the same Python
 *   entry point), so reading the page downloads no Python;
 * - the model itself: p is its next-token distribution after the reader's text (its top tokens, the rest
 *   lumped as "other"), q a draft the reader picks (py/onepass/drafts.py), or the real pair: q the site's draft
 *   model's own after the same text (when the site ships one). This one loads the model, after
 *   asking, and only when the reader asks for it.
 */
import { loadChart } from '../libs.js';
import { DEFAULTS, SAMPLING_DRAWN, SITE_DRAFT } from './defaults.js';
import { button, el, visible } from '../dom.js';
import { panelRunner } from './runs.js';

/** @import { SampleNextRequest, SampleNextResult, SampleRequest } from '../runtime/contract.js' */

const { words: PRESET_WORDS, presets: PRESETS, text: LIVE_TEXT, draws: DRAWS } = DEFAULTS.sampling;
// The kinds of py/onepass/drafts.py, as the reader sees them.
const DRAFT_WORDS = {
  flattened: 'a flattened copy of p (a smaller, less sure model)',
  'one-hot': "all on p's second choice (a copied guess)",
  uniform: 'uniform (a draft that knows nothing)',
  model: "this site's draft model's own q after the same text (the real pair)",
};
const DRAFTS = Object.fromEntries(DEFAULTS.sampling.drafts.map((kind) => [kind, DRAFT_WORDS[kind] ?? kind]));
const OTHER = 'other';
const WORDS = {
  busy: 'Sampling is under way: wait for it to finish.',
  running: 'Sampling…',
  failed: 'Could not sample',
  done: ({ source }, request) => `Done: ${DRAWS.toLocaleString('en')} tokens, seed ${request.seed}`
    + (source === 'preset' ? '.' : `; p is the model's after "${request.text}", q ${DRAFTS[request.draft]}.`),
};

export function mountSampling(root) {
  const runner = panelRunner(root, { panel: 'sampling', words: WORDS, eager: false });
  const { model } = runner;
  const preset = el('select', { className: 'onepass-preset' }, Object.keys(PRESETS).map((name) => el('option', { value: name, textContent: name })));
  const liveText = el('input', { type: 'text', className: 'onepass-live-text', value: LIVE_TEXT, ariaLabel: 'Text before the next token' });
  const draftKind = el('select', { className: 'onepass-draft' }, Object.entries(DRAFTS).map(([value, label]) => el('option', { value, textContent: label })));
  // The real pair only where the site ships a draft model.
  if (SITE_DRAFT.unavailable) draftKind.querySelector('option[value=model]')?.remove();
  const inputs = { p: [], q: [] };
  const table = el('table', { className: 'onepass-sampling-table' });
  const head = el('tr', {}, ['word', 'target p', 'draft q', 'observed', 'count'].map((h) => el('th', { textContent: h })));
  const presetRows = PRESET_WORDS.map((word, i) => {
    for (const which of ['p', 'q']) inputs[which][i] = el('input', { type: 'number', min: 0, max: 1, step: 0.01, className: `onepass-${which}`, ariaLabel: `${which}(${word})` });
    return el('tr', {}, [el('td', { textContent: word }), el('td', {}, [inputs.p[i]]), el('td', {}, [inputs.q[i]]),
      el('td', { className: 'onepass-observed' }), el('td', { className: 'onepass-count' })]);
  });
  // The first seed shown (hooks/contract.py's, which drew the presets at it).
  let seed = SAMPLING_DRAWN.seed;
  let source = 'preset';
  const seedText = el('span', { className: 'onepass-seed' });
  const run = button(`Draft and verify ${DRAWS.toLocaleString('en')} tokens`, 'onepass-run', true);
  const reseed = button('New seed', 'onepass-reseed');
  const runLive = button('Sample from the model', 'onepass-run-live');
  const verdict = el('p', { className: 'onepass-verdict' });
  const canvas = el('canvas', { className: 'onepass-chart' });
  root.append(
    el('div', { className: 'onepass-controls' }, [el('label', {}, ['Preset ', preset]), run, reseed, seedText]),
    el('div', { className: 'onepass-controls onepass-live' }, [el('label', {}, ['Or the model\'s own p after ', liveText]),
      el('label', {}, [' with the draft ', draftKind]), runLive, model.retry]),
    table, model.status, verdict, el('div', { className: 'onepass-chart-box' }, [canvas]));
  let chart = null;

  const fill = () => {
    const values = PRESETS[preset.value];
    for (const which of ['p', 'q']) values[which].forEach((v, i) => { inputs[which][i].value = v; });
  };
  const read = (which) => inputs[which].map((input) => Number(input.value));

  /** The model's rows: its top tokens and "other", with p and q as numbers (they come from the model, not the reader). */
  function liveRows(words, result) {
    return words.map((word, i) => el('tr', {}, [el('td', {}, [el('code', { textContent: word })]),
      el('td', { textContent: result.p[i].toFixed(3) }), el('td', { textContent: result.q[i].toFixed(3) }),
      el('td', { className: 'onepass-observed' }), el('td', { className: 'onepass-count' })]));
  }

  async function draw({ result, words, source: from }) {
    const rows = from === 'preset' ? presetRows : liveRows(words, result);
    table.replaceChildren(head, ...rows);
    rows.forEach((row, i) => {
      row.querySelector('.onepass-observed').textContent = result.frequencies[i].toFixed(3);
      row.querySelector('.onepass-count').textContent = result.counts[i];
    });
    const v = result.verdict;
    // Not called a p-value here: p is the target's probability on this page.
    verdict.textContent = `χ² = ${v.statistic.toFixed(2)} with ${v.dof} degrees of freedom; an exact rule gives a χ² this `
      + `large or larger with probability ${v.pValue.toPrecision(3)}: `
      + (v.consistent ? `consistent with the target p (no evidence against it at the ${v.level * 100} % level).`
        : `NOT consistent with p at the ${v.level * 100} % level. An exact rule still fails this test for one seed in ${Math.round(1 / v.level)}: try a new seed.`)
      + ` ${result.accepted.toLocaleString('en')} of ${result.draws.toLocaleString('en')} drafted tokens were kept as drafted.`;
    root.dataset.consistent = v.consistent;
    root.dataset.p = from;
    const Chart = await loadChart();
    if (!root.isConnected) return; // the reader moved on (instant navigation) while the draws ran: no chart for a page that is gone
    const data = { labels: words, datasets: [{ label: 'target p', data: result.p }, { label: 'observed', data: result.frequencies }, { label: 'draft q', data: result.q }] };
    if (chart) {
      chart.data = data;
      chart.update();
    } else {
      chart = new Chart(canvas, { type: 'bar', data, options: { animation: false, scales: { y: { beginAtZero: true, title: { display: true, text: 'probability' } } } } });
    }
  }

  /** Draw and verify with the current source; the model's p needs the model, which is asked for the first time. */
  function sample() {
    const from = source;
    /** @type {['sampleNext', Partial<SampleNextRequest>] | ['sample', Partial<SampleRequest>]} */
    const [kind, fields] = from === 'model' ? ['sampleNext', { text: liveText.value, draft: draftKind.value, draws: DRAWS, seed }]
      : ['sample', { p: read('p'), q: read('q'), draws: DRAWS, seed }];
    return runner.execute(kind, fields, {
      fresh: true, // seeded draws cost a moment: nothing to keep
      needsModel: from === 'model',
      start: () => { seedText.textContent = `seed ${fields.seed}`; },
      live: async (asked, { run }) => {
        if (from === 'preset') return { result: await run(), words: PRESET_WORDS, source: from };
        model.say('One pass for the model\'s p, then sampling…');
        const result = /** @type {SampleNextResult} */ (await run()); // the model's source asks sampleNext
        return { result, words: [...result.ids.map((id) => visible(result.labels[id])), OTHER], source: from };
      },
      draw,
    });
  }

  /** The preset as the build drew it at the first seed: what the button would draw, with no Python started. */
  async function showDrawn() {
    source = 'preset';
    seedText.textContent = `seed ${seed}`;
    root.dataset.state = 'drawing';
    await draw({ result: SAMPLING_DRAWN.presets[preset.value], words: PRESET_WORDS, source });
    model.say(`Drawn when this site was built, by the same Python code, seed ${seed}. Press "Draft and verify" to draw `
      + 'in your tab: that starts Python, but needs no model.');
    root.dataset.state = 'done';
    root.dataset.source = 'recorded';
  }

  const use = (which) => () => {
    source = which;
    sample();
  };
  // A preset at the first seed is already drawn; at another seed it is drawn afresh.
  preset.addEventListener('change', () => {
    if (runner.busy()) return;
    fill();
    if (seed === SAMPLING_DRAWN.seed) showDrawn();
    else use('preset')();
  });
  run.addEventListener('click', use('preset'));
  runLive.addEventListener('click', use('model'));
  draftKind.addEventListener('change', () => { if (source === 'model') sample(); });
  reseed.addEventListener('click', () => { seed += 1; sample(); });
  fill();
  showDrawn();
  return () => chart?.destroy();
}
