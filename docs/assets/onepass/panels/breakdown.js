/**
 * "Under the hood": where one live run's time went, pass by pass, as measured in this tab (runs.js's `timing`).
 * The worker times the model's run, the KV cache's handling, the bridge between Python and JavaScript, and
 * Python's own work one after another, so with "everything else" (reading the text, starting and ending the
 * run, the messages) they add up to the run's wall time. The page draws a pass while the worker already runs the
 * next, so its time overlaps theirs: it gets a row and a share, but is not subtracted from "everything else".
 */
import { median, TIMING } from '../runtime/client.js';
import { el } from '../dom.js';

// The worker's parts are the contract's (py/onepass/contract.py's TIMING); the page's is its own.
const LABELS = {
  model: 'The model (onnxruntime-web)',
  kv: 'KV cache handling',
  bridge: 'Bridge (Python ↔ JavaScript)',
  python: 'Python (the algorithm)',
};
const IN_WORKER = TIMING;
export const PARTS = [...IN_WORKER.map((key) => ({ key, label: LABELS[key] ?? key })),
  { key: 'page', label: 'This page (from the pass sent to drawn)' }];

const msText = (seconds) => {
  const digits = seconds < 0.01 ? 2 : 1; // a per-pass median of a tenth of a millisecond still shows
  return `${(seconds * 1000).toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })} ms`;
};
const share = (seconds, wall) => `${((100 * seconds) / wall).toFixed(1)} %`;

/**
 * Per part: total and median per pass (seconds); `rest` is the wall time the worker's parts leave, `drawing` the
 * page's own drawing within its part (the rest of it is the message on its way and waiting for its turn).
 */
export function summarise({ wall, passes }) {
  const rows = PARTS.map(({ key, label }) => {
    const each = passes.map((p) => p[key]);
    return { key, label, total: each.reduce((a, b) => a + b, 0), median: median(each) };
  });
  const inWorker = rows.filter((r) => IN_WORKER.includes(r.key)).reduce((sum, r) => sum + r.total, 0);
  const drawing = passes.reduce((sum, p) => sum + p.drawing, 0);
  return { wall, passes: passes.length, rows, rest: Math.max(0, wall - inWorker), drawing };
}

/** The breakdown as a table, and a sentence that says where and when it was measured. */
export function breakdownTable(summary, { threads, kvCache }) {
  const row = (key, label, total, perPass) => {
    const tr = el('tr', {}, [
      el('th', { scope: 'row', textContent: label }),
      el('td', { textContent: msText(total) }),
      el('td', { textContent: share(total, summary.wall) }),
      el('td', { textContent: perPass === null ? '—' : msText(perPass) }),
    ]);
    Object.assign(tr.dataset, { part: key, seconds: total }); // for the tests: the exact figures
    return tr;
  };
  const rows = summary.rows.map((r) => row(r.key, r.label, r.total, r.median));
  const rest = row('rest', 'Everything else (reading the text, starting and ending the run)', summary.rest, null);
  const table = el('table', { className: 'onepass-breakdown-table' }, [
    el('caption', { textContent: `Where this run's ${msText(summary.wall)} went, over ${summary.passes} passes` }),
    el('thead', {}, [el('tr', {}, ['Part', 'Total', 'Share of the run', 'Median per pass'].map((h) => el('th', { scope: 'col', textContent: h })))]),
    el('tbody', {}, [...rows, rest]),
  ]);
  Object.assign(table.dataset, { wall: summary.wall, drawing: summary.drawing });
  const said = el('p', { className: 'onepass-breakdown-note', textContent: `Measured in this tab, on this run: ${summary.passes} passes, `
    + `${msText(summary.wall)} from the request to the last result, with the KV cache ${kvCache ? 'on' : 'off'} and `
    + `${threads} thread${threads === 1 ? '' : 's'} for the model. The page draws each pass while the worker already runs `
    + 'the next, so its time overlaps the rows above it; the others, with everything else, add up to the whole run. '
    + `Of the page's ${msText(summary.rows.find((r) => r.key === 'page').total)}, ${msText(summary.drawing)} went into drawing; `
    + 'the rest is each pass on its way from the worker and waiting for its turn on the page.' });
  return el('div', {}, [table, said]);
}
