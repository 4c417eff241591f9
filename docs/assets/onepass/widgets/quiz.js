/**
 * Step 8's quiz: the lesson's four multiple-choice questions on the station's central ideas. The first answer to a
 * question counts; the feedback explains the right answer whether the reader found it or not.
 * Answers persist in `onepass.quiz` as {answers: {questionId: optionIndex}, right, total}, which the
 * strip reads for the score.
 */
import { KEYS, PROGRESS_EVENT, forget, read, write } from '../store.js';
import { el } from '../dom.js';

export const QUESTIONS = [
  {
    id: 'same-text',
    text: 'A cheap draft proposes tokens and the model verifies them. Compared with ordinary greedy generation, the text that comes out is…',
    options: [
      'identical, token for token — only the number of passes changes.',
      'slightly different wherever the draft was wrong.',
      'a little worse, the price of the speed.',
    ],
    answer: 0,
    explain: 'A drafted token is kept only if it is the model’s own prediction at that position, given exactly the text before it, and at the first disagreement the model’s own token is taken instead. So every token is one greedy generation would have written; the draft decides how fast the text comes, never what it is.',
  },
  {
    id: 'one-pass',
    text: 'Why can one pass check several proposed tokens at once?',
    options: [
      'The model was trained to emit several tokens per pass.',
      'Each position sees only earlier tokens, so one pass yields every position’s own prediction.',
      'The draft checks its own tokens before the model sees them.',
    ],
    answer: 1,
    explain: 'A pass predicts the next token after every position, and the causal mask keeps each prediction blind to the tokens after it, so each is exactly what ordinary generation would have predicted there. Nothing is retrained. And the wide pass is cheap next to one pass per token: the parameters are fetched once and used at every position. On a server’s accelerator the extra positions cost almost nothing; on a CPU, as in this tab, they cost more, but far less than separate passes.',
  },
  {
    id: 'first-wrong',
    text: 'A draft of 5 tokens is verified. Its first two tokens match the model; the third does not. How many tokens does that pass add to the text?',
    options: ['2', '3', '5', '6'],
    answer: 1,
    explain: 'Three: the two accepted tokens plus the model’s own token at the first disagreement (the correction). The rest of the draft is dropped, because the model’s predictions after a wrong token are about a text it would not write. A pass always adds at least one token, and six only when all five are right (the bonus token).',
  },
  {
    id: 'best-length',
    text: 'Why is there a best draft length, rather than “the longer the better”?',
    options: [
      'A pass can only check a fixed number of tokens at once.',
      'Longer drafts make the text drift away from greedy’s.',
      'Every drafted token costs c, but pays only if all before it were accepted.',
    ],
    answer: 2,
    explain: 'The k-th drafted token is kept only if the k − 1 before it were right and it is right too, with probability αᵏ, while its cost c is paid every time. So the gain from each extra token shrinks and its cost does not: the speed-up peaks at a handful of tokens for an ordinary draft (longer for a very good, cheap one). A mostly wrong draft gains little, and where that gain is smaller than its cost it is slower than not drafting at all: a single drafted token still gives 1.24× at α = 0.3, γ = 1, c = 0.05, but 0.92× at α = 0.1, γ = 1, c = 0.2.',
  },
];

/** The stored answers, keeping only ones that still name a question and one of its options. */
function storedAnswers() {
  const stored = read(KEYS.quiz);
  const answers = stored && typeof stored.answers === 'object' && stored.answers ? stored.answers : {};
  return Object.fromEntries(QUESTIONS
    .filter((q) => Number.isInteger(answers[q.id]) && answers[q.id] >= 0 && answers[q.id] < q.options.length)
    .map((q) => [q.id, answers[q.id]]));
}

export function quizScore() {
  const answers = storedAnswers();
  return {
    answered: Object.keys(answers).length,
    right: QUESTIONS.filter((q) => answers[q.id] === q.answer).length,
    total: QUESTIONS.length,
  };
}

function save(answers) {
  const right = QUESTIONS.filter((q) => answers[q.id] === q.answer).length;
  write(KEYS.quiz, { answers, right, total: QUESTIONS.length });
}

function renderQuestion(question, index, answers) {
  const chosen = answers[question.id];
  const answered = chosen !== undefined;
  const options = question.options.map((option, i) => {
    let mark = '';
    if (answered && i === question.answer) mark = '✓ ';
    else if (answered && i === chosen) mark = '✗ ';
    const button = el('button', { type: 'button', className: 'onepass-quiz__option', disabled: answered }, [
      el('span', { className: 'onepass-quiz__mark', textContent: mark }),
      option,
    ]);
    if (answered && i === question.answer) button.classList.add('onepass-quiz__option--right');
    if (answered && i === chosen && i !== question.answer) button.classList.add('onepass-quiz__option--wrong');
    if (answered && i === chosen) button.setAttribute('aria-pressed', 'true');
    button.addEventListener('click', () => {
      save({ ...storedAnswers(), [question.id]: i }); // redraws the quiz, so the clicked button is gone
      /** @type {HTMLElement} */ (document.querySelector(`#quiz-${question.id} .onepass-quiz__feedback`))?.focus();
    });
    return el('li', {}, [button]);
  });
  const parts = [
    el('legend', { textContent: `${index + 1}. ${question.text}` }),
    el('ol', { className: 'onepass-quiz__options', type: 'a' }, options),
  ];
  if (answered) {
    const right = chosen === question.answer;
    parts.push(el('p', { className: `onepass-quiz__feedback onepass-quiz__feedback--${right ? 'right' : 'wrong'}`, tabIndex: -1 }, [
      el('strong', { textContent: right ? 'Right. ' : 'Not quite. ' }),
      question.explain,
    ]));
  }
  return el('fieldset', { className: 'onepass-quiz__question', id: `quiz-${question.id}` }, parts);
}

let mounted = null; // the quiz root on the current page, if any

function render() {
  if (!mounted?.isConnected) return;
  const answers = storedAnswers();
  const score = quizScore();
  const again = el('button', { type: 'button', className: 'md-button onepass-quiz__again', textContent: 'Start again' });
  again.addEventListener('click', () => forget(KEYS.quiz));
  const summary = score.answered === score.total
    ? `Score: ${score.right} of ${score.total}.`
    : `Answered ${score.answered} of ${score.total}; ${score.right} right so far.`;
  mounted.replaceChildren(
    ...QUESTIONS.map((q, i) => renderQuestion(q, i, answers)),
    el('p', { className: 'onepass-quiz__score', role: 'status' }, score.answered ? [summary, ' ', again] : [summary]),
  );
}

export function mountQuiz(root) {
  mounted = root;
  render();
}

// One listener for the whole visit: a stored answer (or a reset from the strip) redraws the quiz.
window.addEventListener(PROGRESS_EVENT, render);
