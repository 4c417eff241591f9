/**
 * Step 5, "Copy and check": prompt lookup on three worked examples and on the reader's text, run to the end,
 * each pass showing the match it copied from, the proposal and what was kept; then plain greedy on the same
 * text, and a line that checks the claim (identical text) with both pass counts and times. Beyond: the
 * proposer itself, as editable Python run inside Pyodide (a loop that never ends is stopped by Cancel through
 * Pyodide's interrupt buffer when the page is cross-origin isolated).
 */
import { DEFAULTS } from './defaults.js';
import { button, el, ms } from '../dom.js';
import { recordMeasured } from './model.js';
import { quietRun, runFrame } from './runs.js';

const { examples, proposer: defaultSource } = DEFAULTS.lookup;

export function mountLookup(root) {
  const frame = runFrame(root, { panel: 'lookup', text: DEFAULTS.lookup.text, rows: 3 });
  const about = el('p', { className: 'onepass-example-point' });
  const shownPrompt = el('pre', { className: 'onepass-example-prompt' });
  const chooser = el('div', { className: 'onepass-controls onepass-examples' });
  const compare = el('p', { className: 'onepass-compare' });
  const editor = el('textarea', { className: 'onepass-proposer', rows: 12, spellcheck: false, ariaLabel: 'Your proposer (Python)' });
  const runMine = button('Run with my proposer', 'onepass-run-mine');
  const resetEditor = button('Back to prompt lookup', 'onepass-reset-proposer');
  const beyond = el('details', { className: 'onepass-beyond' }, [
    el('summary', { textContent: 'Beyond: write your own proposer' }),
    el('p', { textContent: 'propose(text) receives the token ids so far and returns the ids it guesses come next ([] for no guess). '
      + 'It runs in Python in this tab. Whatever it proposes, verification keeps only what the model would write, so the text cannot change; only the passes can. Cancel stops a proposer that never returns.' }),
    editor, el('div', { className: 'onepass-controls' }, [runMine, resetEditor]),
  ]);
  frame.extra.append(chooser, about, shownPrompt);
  root.append(compare, beyond);

  let chosen = null; // the example picked, or null for the reader's own text

  function choose(example) {
    chosen = example;
    for (const b of chooser.children) b.classList.toggle('onepass-chosen', b.dataset.key === (example?.key ?? 'own'));
    about.textContent = example ? `${example.title}: ${example.point} Sent as a chat message.` : 'Your own text: type it above.';
    shownPrompt.textContent = example ? example.prompt : '';
    shownPrompt.hidden = !example;
    frame.input.hidden = Boolean(example);
  }

  function request(mode) {
    const text = chosen ? chosen.prompt : frame.input.value;
    const maxNew = chosen ? chosen.max_new : DEFAULTS.lookup.maxNew;
    return { text, mode, kvCache: frame.kv.checked, maxNew, ...(mode === 'custom' ? { proposer: editor.value } : {}) };
  }

  async function runAndCompare(mode) {
    if (frame.busy()) return;
    compare.textContent = '';
    delete root.dataset.identical;
    const req = request(mode);
    const outcome = await frame.execute(req, { note: mode === 'custom' ? 'Drafts from your proposer.' : '' });
    if (!outcome) return;
    const { result } = outcome;
    root.dataset.state = 'comparing';
    compare.textContent = 'Now the same text one token per pass, to compare…';
    try {
      const greedy = await quietRun('lookup', { ...req, mode: 'greedy', proposer: undefined });
      const same = JSON.stringify(greedy.tokens) === JSON.stringify(result.tokens);
      const t = result.totals;
      const g = greedy.totals;
      compare.textContent = `Identical to one-at-a-time: ${same ? 'yes' : 'no'} · ${mode === 'custom' ? 'your proposer' : 'prompt lookup'}: `
        + `${t.passes} passes, ${ms(t.seconds)} · one at a time: ${g.passes} passes, ${ms(g.seconds)} · `
        + `${t.tokens} tokens, ${t.accepted} of ${t.drafted} drafted tokens accepted. ${verdict(mode, t.seconds, g.seconds)}`;
      Object.assign(root.dataset, { identical: same ? 'yes' : 'no', passes: t.passes, greedyPasses: g.passes, state: 'done' });
      recordMeasured(result, greedy, chosen ? chosen.title : 'your text');
    } catch (err) {
      compare.textContent = `The comparison run failed: ${err.code === 'cancelled' ? 'cancelled' : err.message}`;
      root.dataset.state = 'error';
    }
  }

  /** Which run was faster in this tab, and by how much: the measurement, whichever way it falls. */
  function verdict(mode, drafted, greedy) {
    const who = mode === 'custom' ? 'your proposer' : 'prompt lookup';
    const ratio = greedy / drafted;
    if (Math.abs(ratio - 1) < 0.05) return 'In this tab the two took the same time, within 5 %.';
    return ratio > 1 ? `In this tab ${who} was ${ratio.toFixed(2)}× as fast.`
      : `In this tab ${who} was slower: it took ${(1 / ratio).toFixed(2)}× as long.`;
  }

  frame.run.addEventListener('click', () => runAndCompare('lookup'));
  runMine.addEventListener('click', () => runAndCompare('custom'));
  resetEditor.addEventListener('click', () => { editor.value = defaultSource; });

  editor.value = defaultSource;
  chooser.append(...examples.map((e) => Object.assign(button(e.title, 'onepass-example'), { onclick: () => choose(e) })),
    Object.assign(button('Your text', 'onepass-example'), { onclick: () => choose(null) }));
  examples.forEach((e, i) => { chooser.children[i].dataset.key = e.key; });
  chooser.lastChild.dataset.key = 'own';
  choose(examples[0]);
  frame.showTrace('lookup');
}
