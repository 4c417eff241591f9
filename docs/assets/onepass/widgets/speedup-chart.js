/**
 * Step 6's speed-up chart: bars of the speed-up against draft length gamma = 1..MAX_GAMMA for the acceptance
 * rate alpha and cost ratio c set by sliders, a break-even line at 1, the best gamma starred (in its
 * label and in the text, not by colour alone). Needs no model. If a step-5 run left its alpha and c
 * (fitted to the run by estimate.js) in `onepass.measured`, they are drawn as a second series, the sentence
 * beside it states the measured figures they reproduce, and one button applies them. A run of step 6's live draft
 * model (`showDraftRun`, from its panel) adds the formula at that run's α and c, and the speed-up it measured on
 * the wall clock as a point at its γ: predicted beside measured, both from this tab.
 * Colours come from Material's CSS variables and follow the light/dark toggle.
 */
import { loadChart } from '../libs.js';
import { KEYS, SITE_ROOT, finite, read } from '../store.js';
import { el } from '../dom.js';
import { MAX_GAMMA, bestGamma, speedup } from '../speedup.js';

const GAMMAS = Array.from({ length: MAX_GAMMA }, (_, i) => i + 1);
let draftRun = null; // the last run of step 6's draft model on this page visit: {alpha, c, gamma, measured, alphas}
const redraws = new Set(); // each mounted chart's redraw, for a new draft run

/**
 * Step 6's draft-model panel hands its run's figures here (every one measured in this tab): `alpha` (all positions
 * together; `alphas` per position), `c`, `gamma`, and `measured`, the speed-up on the wall clock. Null clears them.
 */
export function showDraftRun(run) {
  draftRun = run;
  for (const redraw of redraws) redraw();
}

/** The draft run's figures in words: what the formula predicts at them beside what was measured. */
function describeDraftRun(run) {
  const positions = run.alphas.map((a, i) => `${i + 1}: ${a.toFixed(2)}`).join(', ');
  return `Your draft model's run (the panel below), measured in this tab: α = ${run.alpha.toFixed(2)} (by draft position: ${positions}), `
    + `c = ${run.c.toFixed(3)}, γ = ${run.gamma}. The solid line is the formula at that α and c: it predicts `
    + `${speedup(run.alpha, run.gamma, run.c).toFixed(2)}× at γ = ${run.gamma}; the round point is what the run `
    + `measured on the wall clock against one at a time: ${run.measured.toFixed(2)}×. (The formula counts neither the `
    + 'extra cost of a longer verifying pass nor the crossings between Python and the model, and takes α the same at '
    + 'every position.)';
}
const START = { alpha: 0.7, c: 0.05, gamma: 4 }; // a good small draft model, as in the literature
const SLIDERS = [
  { key: 'alpha', label: 'Acceptance rate α', min: 0, max: 1, step: 0.01, digits: 2 },
  // Fine steps for c: a copied draft (step 5) costs a few thousandths of a pass.
  { key: 'c', label: 'Cost ratio c', min: 0, max: 1, step: 0.001, digits: 3 },
  { key: 'gamma', label: 'Draft length γ (highlighted)', min: 1, max: GAMMAS.length, step: 1, digits: 0 },
];

function palette() {
  const css = getComputedStyle(document.body);
  const v = (name) => css.getPropertyValue(name).trim();
  return { text: v('--md-default-fg-color'), grid: v('--md-default-fg-color--lightest'), bar: v('--md-primary-fg-color'),
    best: v('--md-accent-fg-color'), line: v('--md-default-fg-color--light') };
}

/** The reader's alpha and c from step 5, or null when absent or unusable. */
function measuredRun() {
  const m = read(KEYS.measured);
  if (!m || typeof m !== 'object') return null;
  const alpha = finite(m.alpha);
  const c = finite(m.c);
  const gamma = finite(m.gamma);
  if (alpha === null || alpha < 0 || alpha > 1 || c === null || c < 0 || gamma === null || gamma < 1) return null;
  const f = m.fitted && typeof m.fitted === 'object' ? m.fitted : {};
  return { alpha, c, gamma, passes: finite(m.passes), tokens: finite(m.tokens), greedyPasses: finite(m.greedy_passes),
    label: typeof m.label === 'string' ? m.label : 'your text',
    fitted: { passes: finite(f.passes), tokens: finite(f.tokens), msPerToken: finite(f.ms_per_token),
      greedyMsPerToken: finite(f.greedy_ms_per_token) } };
}

/** What the reader's run measured, and that the formula at its alpha and c gives the same. */
function describeRun(run) {
  const parts = [`Your last run on step 5 (“${run.label}”)`];
  if (run.tokens !== null && run.passes !== null) parts.push(` wrote ${run.tokens} tokens in ${run.passes} passes`);
  if (run.greedyPasses !== null) parts.push(`, against ${run.greedyPasses} one at a time`);
  const f = run.fitted;
  if (f.tokens !== null && f.passes !== null && f.msPerToken !== null && f.greedyMsPerToken !== null) {
    parts.push(`. After the pass that read the prompt: ${(f.tokens / f.passes).toFixed(2)} tokens per pass and `
      + `${f.msPerToken.toFixed(0)} ms per token in this tab, against ${f.greedyMsPerToken.toFixed(0)} ms one at a time`);
  }
  parts.push(`. The formula gives these figures at γ = ${run.gamma} with α = ${run.alpha.toFixed(2)} and `
    + `c = ${run.c.toFixed(3)}${run.c === 0 ? ' (or a little more time: drafted passes came out quicker than ordinary ones, and c cannot be below 0)' : ''}; `
    + `the dotted line is the formula at that α and c: ${speedup(run.alpha, run.gamma, run.c).toFixed(2)}× at γ = ${run.gamma}, `
    + 'as your run measured; at other lengths, the formula\'s guess.');
  return parts.join('');
}

function summaryText({ alpha, c, gamma }) {
  const best = bestGamma(alpha, c, GAMMAS);
  const top = speedup(alpha, best, c);
  const here = `At γ = ${gamma}: ${speedup(alpha, gamma, c).toFixed(2)}×.`;
  if (top < 1) {
    return `No draft length breaks even at α = ${alpha.toFixed(2)} and c = ${Number(c.toFixed(3))}: every draft makes generation slower than one token per pass (best: γ = ${best}, ${top.toFixed(2)}×). ${here}`;
  }
  const end = best === MAX_GAMMA ? ` That is the chart's end: a draft this good and this cheap would gain a little more from longer drafts still.` : '';
  return `Best draft length: γ = ${best}, ${top.toFixed(2)}× faster than one token per pass.${end} ${here}`;
}

function chartData(values, run, colours) {
  const best = bestGamma(values.alpha, values.c, GAMMAS);
  /** @type {Object[]} Chart.js's datasets, each of its own kind (bars, a line, points) */
  const datasets = [
    {
      type: 'bar', label: 'speed-up', order: 2,
      data: GAMMAS.map((g) => speedup(values.alpha, g, values.c)),
      backgroundColor: GAMMAS.map((g) => (g === best ? colours.best : colours.bar)),
      borderColor: colours.text,
      borderWidth: GAMMAS.map((g) => (g === values.gamma ? 3 : 0)),
    },
    {
      type: 'line', label: 'break-even (1×)', order: 1, data: GAMMAS.map(() => 1),
      borderColor: colours.line, borderDash: [6, 4], borderWidth: 2, pointRadius: 0,
    },
  ];
  if (draftRun) {
    datasets.push({
      type: 'line', label: 'the formula at your draft model\'s α and c', order: 0,
      data: GAMMAS.map((g) => speedup(draftRun.alpha, g, draftRun.c)),
      borderColor: colours.best, borderWidth: 2, pointRadius: 0,
    }, {
      type: 'line', label: 'measured with your draft model (wall clock)', order: 0, showLine: false,
      data: GAMMAS.map((g) => (g === draftRun.gamma ? draftRun.measured : null)),
      pointRadius: 7, pointStyle: 'circle', borderColor: colours.text, backgroundColor: colours.best,
    });
  }
  if (run) {
    datasets.push({
      type: 'line', label: 'your step-5 α and c', order: 0, data: GAMMAS.map((g) => speedup(run.alpha, g, run.c)),
      borderColor: colours.text, borderDash: [2, 3], borderWidth: 2, pointRadius: 3, pointStyle: 'rectRot',
      backgroundColor: colours.text,
    });
  }
  return { labels: GAMMAS.map((g) => (g === best ? `γ=${g} ★ best` : `γ=${g}`)), datasets };
}

function chartOptions(colours) {
  const axis = (title) => ({ title: { display: true, text: title, color: colours.text }, ticks: { color: colours.text },
    grid: { color: colours.grid } });
  return {
    responsive: true, maintainAspectRatio: false, animation: { duration: 150 },
    scales: { x: axis('draft length γ'), y: { ...axis('speed-up (×)'), beginAtZero: true } },
    plugins: { legend: { labels: { color: colours.text } },
      tooltip: { callbacks: { label: (item) => `${item.dataset.label}: ${item.parsed.y.toFixed(2)}×` } } },
  };
}

function slider(spec, value, onInput) {
  const input = el('input', { type: 'range', min: spec.min, max: spec.max, step: spec.step, value, name: spec.key,
    className: `onepass-chart__${spec.key}` });
  const shown = el('output', { textContent: Number(value).toFixed(spec.digits) });
  input.addEventListener('input', () => {
    shown.textContent = Number(input.value).toFixed(spec.digits);
    onInput();
  });
  return { input, shown, label: el('label', { className: 'onepass-chart__control' }, [`${spec.label} `, input, ' ', shown]) };
}

/** Draw the chart in `root`; resolves to its cleanup once Chart.js has drawn it. */
export async function mountChart(root) {
  const summary = el('p', { className: 'onepass-chart__summary', ariaLive: 'polite' });
  const canvas = el('canvas', { ariaLabel: 'Bar chart of the speed-up against draft length γ', role: 'img' });
  const note = el('p', { className: 'onepass-chart__measured' });
  const draftNote = el('p', { className: 'onepass-chart__draft', ariaLive: 'polite' });
  const useDraft = el('button', { type: 'button', className: 'md-button onepass-chart__use-draft', textContent: 'Use my draft model\'s α and c' });
  const run = measuredRun();
  const controls = {};
  let chart = null;
  const current = () => /** @type {{alpha: number, c: number, gamma: number}} */ (
    Object.fromEntries(SLIDERS.map((s) => [s.key, Number(controls[s.key].input.value)])));
  const update = () => {
    const values = current();
    summary.textContent = summaryText(values);
    root.dataset.best = String(bestGamma(values.alpha, values.c, GAMMAS));
    if (chart) {
      chart.data = chartData(values, run, palette());
      chart.update();
    }
  };
  SLIDERS.forEach((spec) => { controls[spec.key] = slider(spec, START[spec.key], update); });
  /** The sliders at `chosen` (they stop at their ends and snap to their steps; the sentences keep exact values). */
  const set = (chosen) => {
    SLIDERS.forEach((s) => {
      controls[s.key].input.value = chosen[s.key];
      controls[s.key].shown.textContent = Number(controls[s.key].input.value).toFixed(s.digits);
    });
    update();
  };
  useDraft.addEventListener('click', () => set({ alpha: draftRun.alpha, c: Math.min(draftRun.c, 1), gamma: draftRun.gamma }));
  const showDraft = () => {
    draftNote.replaceChildren(...(draftRun ? [describeDraftRun(draftRun), ' ', useDraft] : []));
    draftNote.hidden = !draftRun;
    if (draftRun) root.dataset.draftRun = '';
    else delete root.dataset.draftRun;
    update();
  };

  if (run) {
    const use = el('button', { type: 'button', className: 'md-button onepass-chart__use', textContent: 'Use my α and c' });
    use.addEventListener('click', () => set({ alpha: run.alpha, c: Math.min(run.c, 1), gamma: Math.min(Math.round(run.gamma), MAX_GAMMA) }));
    note.append(describeRun(run), ' ', use);
  } else {
    note.append('A run on ', el('a', { href: new URL('copy-and-check/', SITE_ROOT).href, textContent: 'step 5' }),
      ' will add its own α and c here.');
  }
  root.replaceChildren(
    el('div', { className: 'onepass-chart__controls' }, SLIDERS.map((s) => controls[s.key].label)),
    summary,
    el('div', { className: 'onepass-chart__canvas' }, [canvas]),
    draftNote,
    note,
  );
  showDraft();
  redraws.add(showDraft);

  let Chart;
  try {
    Chart = await loadChart();
  } catch (err) {
    summary.textContent += ` (The chart could not be drawn: ${err.message}.)`;
    return;
  }
  if (!root.isConnected) { // the reader moved on while Chart.js loaded
    redraws.delete(showDraft);
    return;
  }
  chart = new Chart(canvas, { type: 'bar', data: chartData(current(), run, palette()), options: chartOptions(palette()) });
  // Material flips the palette by changing an attribute on <body>; redraw in the new colours.
  const observer = new MutationObserver(() => {
    chart.options = chartOptions(palette());
    update();
  });
  observer.observe(document.body, { attributes: true, attributeFilter: ['data-md-color-scheme'] });
  root.dataset.ready = '';
  return () => { // the page was left: the chart and its observer go with it
    chart.destroy();
    observer.disconnect();
    redraws.delete(showDraft);
  };
}
