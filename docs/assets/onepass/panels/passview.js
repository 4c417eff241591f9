/**
 * A run drawn pass by pass: for each pass the draft it checked (accepted tokens, then rejected ones), the
 * model's own token (a correction at the first disagreement, or a bonus after a fully accepted draft, or the
 * one token of an ordinary pass), the match prompt lookup copied from, and the pass's time. Each kind of token
 * has its own colour AND its own mark and title, so colour is never the only signal; a legend names them.
 * Counters for passes and tokens, and the text built so far (decoded by the worker, whole characters only).
 * A run with a draft model (step 6) also counts the draft's small passes, and each row says how many it ran
 * before that pass of the model and how long they took.
 */
import { el, ms, visible } from '../dom.js';

/** @import { GenerateResult, PassRow } from '../runtime/contract.js' */

export const KINDS = {
  accepted: { mark: '✓', title: 'accepted: the draft token equals the model\'s own' },
  rejected: { mark: '✗', title: 'rejected: after the first disagreement, nothing of the draft is kept' },
  corrected: { mark: '→', title: 'corrected: the model\'s own token at the first disagreement' },
  bonus: { mark: '+', title: 'bonus: the whole draft was right, so the token after it came free' },
  model: { mark: '•', title: 'the model\'s token: an ordinary pass, nothing was drafted' },
};

export function token(kind, piece) {
  const { mark, title } = KINDS[kind];
  return el('span', { className: `onepass-tok onepass-tok--${kind}`, title: `${title}: "${piece}"` }, [
    el('span', { className: 'onepass-tok-mark', textContent: mark, ariaHidden: 'true' }),
    visible(piece),
  ]);
}

export function legend(kinds = Object.keys(KINDS)) {
  return el('p', { className: 'onepass-legend' }, kinds.flatMap((kind) => [token(kind, kind), ' ']));
}

/**
 * The tokens of one pass, in order: draft tokens as accepted/rejected, then the model's token.
 * @param {PassRow} pass
 * @param {Object<string, string>} labels each id's text
 */
export function passTokens(pass, labels) {
  const label = (id) => labels[id] ?? `#${id}`;
  const tokens = pass.draft.map((id, i) => token(i < pass.accepted ? 'accepted' : 'rejected', label(id)));
  const kind = !pass.draft.length ? 'model' : pass.bonus ? 'bonus' : 'corrected';
  tokens.push(token(kind, label(pass.token)));
  return tokens;
}

export class PassView {
  /** @param {{kinds?: string[]}} [options] `kinds`: the legend's (all of them by default) */
  constructor({ kinds } = {}) {
    this.counters = el('p', { className: 'onepass-counters' });
    this.prompt = el('span', { className: 'onepass-prompt' });
    this.generated = el('span', { className: 'onepass-generated' });
    this.output = el('pre', { className: 'onepass-output' }, [this.prompt, this.generated]);
    // A scroll box: focusable, so it scrolls from the keyboard too, and named for whoever lands on it.
    this.list = el('ol', { className: 'onepass-passes', tabIndex: 0, ariaLabel: 'Passes, one per row' });
    this.note = el('p', { className: 'onepass-note' });
    this.node = el('div', { className: 'onepass-passview' }, [legend(kinds), this.note, this.output, this.counters, this.list]);
    this.reset('');
  }

  reset(promptText, note = '') {
    this.passes = 0;
    this.tokens = 0;
    this.seconds = 0;
    this.draftPasses = null; // counted once a pass says what the draft model ran before it
    this.draftSeconds = 0;
    this.prompt.textContent = promptText;
    this.generated.textContent = '';
    this.list.replaceChildren();
    this.note.textContent = note;
    this.showCounters();
  }

  showCounters() {
    const drafting = this.draftPasses === null ? ''
      : ` · draft passes: ${this.draftPasses} (${ms(this.draftSeconds)})`;
    this.counters.textContent = `${drafting ? 'Model passes' : 'Passes'}: ${this.passes}${drafting} · tokens: ${this.tokens}`
      + (this.passes ? ` · ${(this.tokens / this.passes).toFixed(2)} tokens per pass · ${ms(this.seconds)} in passes` : '');
  }

  /**
   * One pass arrives: `pass` (its draft, token, time, match), `text`, the text it completed, `labels`, each id's text.
   * @param {PassRow} pass
   * @param {string} text
   * @param {Object<string, string>} labels
   */
  add(pass, text, labels) {
    this.passes += 1;
    this.tokens += pass.added.length;
    this.seconds += pass.seconds;
    this.generated.textContent += text;
    const row = el('li', { className: 'onepass-pass' }, [
      ...('draftPasses' in pass ? [this.drafted(pass), ' '] : []),
      el('span', { className: 'onepass-pass-head', textContent: `Pass ${this.passes} · ${ms(pass.seconds)} · +${pass.added.length}` }),
      ' ',
      ...passTokens(pass, labels),
    ]);
    if ('match' in pass) row.append(el('span', { className: 'onepass-match', textContent: matchText(pass, labels) }));
    this.list.append(row);
    this.showCounters();
  }

  /** The draft model's small passes before this pass of the model, counted and drawn at the row's head. */
  drafted(pass) {
    this.draftPasses = (this.draftPasses ?? 0) + pass.draftPasses;
    this.draftSeconds += pass.draftSeconds;
    let text = 'draft: nothing to read yet, so';
    if (pass.copied) text = `no small pass: copied from ${pass.fromAnswers ? "the model's earlier answers" : 'the text'}, then`;
    else if (pass.draftPasses) {
      text = `draft: ${pass.draftPasses} small pass${pass.draftPasses === 1 ? '' : 'es'}, ${ms(pass.draftSeconds)}, `
        + (pass.withheld ? 'too unsure of its token to propose it, so' : 'then');
    }
    else if (pass.skipped) text = 'no small pass: the draft sits this round out (unsure just before, or not paying in this run), so';
    return el('span', { className: 'onepass-pass-draft', textContent: text });
  }

  /** The whole run is back: the final text replaces the streamed pieces (the stream held nothing back by then). */
  /** @param {GenerateResult} result */
  finish(result) {
    if (typeof result.promptText === 'string') this.prompt.textContent = result.promptText; // as Python sent it
    this.generated.textContent = result.text;
  }
}

/**
 * @param {PassRow} pass
 * @param {Object<string, string>} labels
 */
function matchText(pass, labels) {
  if (!pass.match) return 'no earlier match: nothing to copy, an ordinary pass';
  const ngram = pass.match.ngram.map((id) => labels[id] ?? `#${id}`).join('');
  return `copied after "${visible(ngram)}" (last ${pass.match.n} token${pass.match.n > 1 ? 's' : ''}, found at token ${pass.match.at})`;
}
