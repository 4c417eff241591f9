/**
 * Step 6, live: the reader's text written with the site's draft model (trained by this project's code on the model's
 * own answers; the third kind of draft, which reads the model's last hidden state). Each row
 * is one round: the draft's small passes (one token each), then one pass of the model that verifies them, in the
 * colours of steps 4 and 5 (passview.js). Then the same text one token per pass, in the same request, for the
 * identity check and the wall clock; the run's α per draft position and c (both measured here, by Python:
 * py/onepass/draft_figures.py) go on the speed-up chart above, the formula's prediction beside the
 * measured speed-up. "Best for my machine" sets the draft length to the formula's best at the measured α and c.
 * "Copy first" asks the text before the draft (the "lookup+draft" mode): prompt lookup's copy where the text's last
 * two tokens occurred before, else what the model's own earlier answers continued the last tokens with (the table
 * shipped with the draft), the draft model's tokens elsewhere; α and c are then the draft's
 * rounds alone. "Only where it pays" sends ``adaptive`` (py/onepass/policy.py): the draft proposes nothing where it is
 * unsure of its token, and the run stops asking it while it does not pay. Both are ticked at first (defaults.py).
 * A site built without a draft model says so, and the rest of the page works.
 */
import { DEFAULTS, SITE_DRAFT } from './defaults.js';
import { button, el, ms } from '../dom.js';
import { SITE_ROOT } from '../store.js';
import { runFrame } from './runs.js';

/** @import { GenerateRequest, GenerateResult } from '../runtime/contract.js' */
import { MAX_GAMMA } from '../speedup.js';
import { showDraftRun } from '../widgets/speedup-chart.js';

const { text: DEFAULT_TEXT, chat: DEFAULT_CHAT, chatTurn: CHAT_TURN, maxNew: MAX_NEW, gamma: DEFAULT_GAMMA, copyFirst: COPY_FIRST,
  adaptive: ADAPTIVE, propose: PROPOSE } = DEFAULTS.draft;
const SURE = `${Math.round(100 * PROPOSE)} %`;

export function mountDraftModel(root) {
  const frame = runFrame(root, { panel: 'draft', text: DEFAULT_TEXT, rows: 4, eager: false }); // step 6 loads the model only when asked
  const gamma = el('input', { type: 'number', min: 1, max: MAX_GAMMA, step: 1, value: DEFAULT_GAMMA, className: 'onepass-gamma',
    ariaLabel: 'Draft length γ' });
  const copyFirst = el('input', { type: 'checkbox', className: 'onepass-copy-first', checked: COPY_FIRST });
  const weigh = el('input', { type: 'checkbox', className: 'onepass-weigh', checked: ADAPTIVE });
  const asChat = el('input', { type: 'checkbox', className: 'onepass-as-chat', checked: DEFAULT_CHAT });
  const best = button('Best for my machine', 'onepass-best');
  best.disabled = true;
  best.title = 'Run once first: the best length comes from the α and c your run measures';
  const about = el('p', { className: 'onepass-draft-about' });
  const compare = el('p', { className: 'onepass-compare' });
  const figures = el('p', { className: 'onepass-draft-figures' });
  const bestNote = el('p', { className: 'onepass-best-note', role: 'status' });
  frame.run.before(el('label', {}, ['Draft length γ ', gamma]), best,
    el('label', { title: "Prompt lookup (step 5) where the text repeats itself, else the model's own earlier answers, the draft model elsewhere" },
      [copyFirst, ' Copy first']),
    el('label', { title: `The draft proposes nothing where it is less than ${SURE} sure of its token, and the run stops asking it `
      + 'while its rounds give fewer tokens a second than plain passes' }, [weigh, ' Only where it pays']),
    el('label', { title: "Your text as one message in the model's chat format, as step 5's examples are sent: the model answers "
      + 'it instead of continuing it' }, [asChat, ' As a chat message']));
  frame.extra.append(about);
  root.append(compare, figures, bestNote);
  let measured = null; // the last run's draft figures

  // What the build knows of the draft (defaults.js): the model's folder is not read until the reader presses Run.
  if (SITE_DRAFT.unavailable) {
    root.dataset.draft = 'none';
    frame.run.disabled = true;
    about.textContent = `No draft model here (${SITE_DRAFT.unavailable}), so this panel cannot run. The rest of the page `
      + 'works without it.';
  } else {
    root.dataset.draft = 'ready';
    // A sentence or two: how the draft is made and what it reads are Under the hood's (the page's prose and this
    // paragraph are counted together, tests/test_pages_site.py).
    const megabytes = (bytes) => (bytes / 1e6).toFixed(bytes >= 10e6 ? 0 : 1);
    about.append(`The draft model: ${SITE_DRAFT.parameters.toLocaleString('en')} parameters, `
      + `${megabytes(SITE_DRAFT.size)} MB kept, ${megabytes(SITE_DRAFT.download)} MB on the wire. More on it and its options: `,
    el('a', { href: new URL('runtime/#step-6s-draft-model', SITE_ROOT).href, textContent: 'Under the hood' }), '.');
  }

  function draftLength() {
    const value = Number(gamma.value);
    return Number.isInteger(value) ? value : gamma.value; // anything else goes to Python, which says what is wrong
  }

  async function runAndCompare() {
    if (frame.busy()) return;
    for (const node of [compare, figures, bestNote]) node.textContent = '';
    delete root.dataset.identical;
    delete root.dataset.copies;
    /** @type {Partial<GenerateRequest>} */
    const request = { text: frame.input.value, mode: copyFirst.checked ? 'lookup+draft' : 'draft', gamma: draftLength(),
      adaptive: weigh.checked, baseline: true, chat: asChat.checked, kvCache: frame.kv.checked, maxNew: MAX_NEW };
    const { before, after } = CHAT_TURN;
    const outcome = await frame.execute(request, { shown: request.chat ? before + request.text + after : request.text,
      note: 'Each row: the draft\'s small passes, then one pass of the model that checks them all.' });
    if (!outcome) return;
    show(outcome.result);
  }

  /** @param {GenerateResult} result */
  function show(result) {
    const { draft, baseline: one, totals } = result;
    const copies = result.mode === 'lookup+draft'
      ? ` (${draft.copies} of them checked a copy, ${draft.copies - draft.fromAnswers} from the text and ${draft.fromAnswers} from the `
        + `model's earlier answers, which kept ${draft.copiedTokens} tokens)` : '';
    compare.textContent = `Identical to one at a time: ${one.identical ? 'yes' : 'no'} · with the draft model: ${totals.passes} passes `
      + `of the model${copies} and ${draft.passes} small passes of the draft, ${ms(result.wallSeconds)} on the wall clock · one at a time: `
      + `${one.totals.passes} passes, ${ms(one.wallSeconds)} · ${totals.tokens} tokens, ${totals.accepted} of ${totals.drafted} `
      + `drafted tokens accepted. ${verdict(one.speedup)}`;
    const { draft: asked, withheld, skipped } = draft.rounds;
    Object.assign(root.dataset, { identical: one.identical ? 'yes' : 'no', passes: totals.passes, draftPasses: draft.passes,
      greedyPasses: one.totals.passes, copies: draft.copies, withheld, skipped });
    const weighed = draft.adaptive ? `The draft model proposed in ${asked} rounds; in ${withheld} more it ran but was less than `
      + `${SURE} sure of its token and proposed nothing, and it sat out ${skipped}. ` : '';
    if (draft.alpha === null || draft.c === null) {
      measured = null;
      best.disabled = true;
      if (draft.adaptive && !asked && withheld + skipped) {
        figures.textContent = `${weighed}So it measured no α: untick Only where it pays to see it draft every round.`;
      } else {
        figures.textContent = draft.copies
          ? 'The draft model drafted nothing in this run (every round copied), so it measured no α or c.'
          : 'Nothing was drafted in this run (it was too short), so it measured no α or c: write more tokens.';
      }
      showDraftRun(null);
      return;
    }
    measured = draft;
    best.disabled = false;
    const positions = draft.acceptance.map((p) => `${p.position}: ${p.accepted} of ${p.reached} (${p.alpha.toFixed(2)})`).join(', ');
    const own = draft.copies ? ' of the draft model\'s own rounds (not the copies)' : '';
    figures.textContent = `${weighed}Measured in this tab: acceptance α${own} = ${draft.alpha.toFixed(2)}; by draft position, accepted of reached: `
      + `${positions}. The draft's cost c = ${draft.c.toFixed(3)}: one small pass took ${ms(draft.seconds / draft.passes)}, `
      + `against a one-token pass of the model after the first. The formula at that α and c predicts ${draft.predicted.toFixed(2)}× `
      + `at γ = ${draft.gamma}${draft.copies ? ' for the draft alone' : ''}; the run measured ${one.speedup.toFixed(2)}× on the `
      + 'wall clock after the first pass (which reads your text, with or without a draft). Both are on the chart above. '
      + 'This page drew the drafted run\'s passes as they came and only counted the other run\'s, on the same processor, so '
      + 'if anything these figures are a little less favourable to the draft than a run that drew neither.';
    root.dataset.alpha = draft.alpha;
    root.dataset.c = draft.c;
    root.dataset.bestGamma = draft.bestGamma;
    showDraftRun({ alpha: draft.alpha, alphas: draft.acceptance.map((p) => p.alpha), c: draft.c, gamma: draft.gamma,
      measured: one.speedup });
  }

  /** Which run was faster on the wall clock in this tab, and by how much, whichever way it falls. */
  function verdict(speedup) {
    if (Math.abs(speedup - 1) < 0.05) return 'In this tab the two took the same time after the first pass, within 5 %.';
    return speedup > 1 ? `In this tab drafting was ${speedup.toFixed(2)}× as fast after the first pass.`
      : `In this tab drafting was slower: it took ${(1 / speedup).toFixed(2)}× as long after the first pass.`;
  }

  best.addEventListener('click', () => {
    if (!measured) return;
    const { bestGamma: length, bestPredicted: top, alpha, c } = measured;
    const at = `at your α = ${alpha.toFixed(2)} and c = ${c.toFixed(3)}`;
    if (length === 0) {
      gamma.value = 1;
      bestNote.textContent = `The formula's best ${at} is not to draft at all (γ = 0): no draft length is faster than one `
        + 'at a time on this machine. The draft length is set to the least, 1; run again to see it measured.';
    } else {
      gamma.value = length;
      bestNote.textContent = `The formula's best ${at}: γ = ${length}, a predicted ${top.toFixed(2)}×. Run again to measure it.`;
    }
    root.dataset.chosenGamma = gamma.value;
  });
  frame.run.addEventListener('click', runAndCompare);
  frame.model.say(`Press Run: the draft model and the model write ${MAX_NEW} tokens after your text, then the model alone, to compare.`);
}
