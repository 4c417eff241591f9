/**
 * The visited-steps strip at the top of every page: the eight steps as links, the visited ones ticked,
 * the current one marked (by a tick, a frame and aria-current, so colour is never the only sign), and
 * the quiz score beside them. Visits persist in `onepass.visited`; the score is read from `onepass.quiz`.
 */
import { KEYS, PROGRESS_EVENT, forget, read, write } from '../store.js';
import { el } from '../dom.js';
import { STEPS, stepAt, stepUrl } from '../steps.js';
import { quizScore } from './quiz.js';

function visitedSteps() {
  const stored = read(KEYS.visited);
  const numbers = Array.isArray(stored) ? stored : [];
  return new Set(numbers.filter((n) => Number.isInteger(n) && n >= 1 && n <= STEPS.length));
}

function recordVisit(step) {
  const visited = visitedSteps();
  if (step && !visited.has(step.number)) {
    visited.add(step.number);
    write(KEYS.visited, [...visited].sort((a, b) => a - b));
  }
}

function stepLink(step, visited, current) {
  const isCurrent = current?.number === step.number;
  const isVisited = visited.has(step.number);
  const state = [isVisited ? 'visited' : 'not visited yet', isCurrent ? 'you are here' : ''].filter(Boolean).join(', ');
  const link = el('a', { href: step.url, className: 'onepass-strip__step', title: `${step.number}. ${step.title} (${state})` }, [
    el('span', { className: 'onepass-strip__mark', textContent: String(step.number), ariaHidden: 'true' }),
    el('span', { className: 'onepass-strip__tick', textContent: isVisited ? '✓' : '', ariaHidden: 'true' }),
    el('span', { className: 'onepass-strip__title', textContent: step.title }),
    el('span', { className: 'onepass-sr', textContent: ` (step ${step.number}, ${state})` }),
  ]);
  link.classList.toggle('onepass-strip__step--visited', isVisited);
  if (isCurrent) link.setAttribute('aria-current', 'step');
  return el('li', {}, [link]);
}

function scoreText() {
  const score = quizScore();
  return score.answered === 0 ? 'Quiz: not taken yet' : `Quiz: ${score.right} of ${score.total} right`;
}

function render() {
  const host = document.querySelector('.md-content__inner');
  if (!host) return;
  const current = stepAt(window.location);
  const visited = visitedSteps();
  const reset = el('button', { type: 'button', className: 'onepass-strip__reset', textContent: 'Reset progress' });
  reset.addEventListener('click', () => {
    forget(KEYS.visited, KEYS.quiz);
    recordVisit(current); // the page you are on still counts as seen
  });
  const strip = el('nav', { className: 'onepass-strip', ariaLabel: 'Steps of the station' }, [
    el('ol', { className: 'onepass-strip__steps' }, STEPS.map((step) => stepLink(step, visited, current))),
    el('p', { className: 'onepass-strip__meta' }, [
      el('a', { href: stepUrl(STEPS.length), className: 'onepass-strip__score', textContent: scoreText() }),
      el('span', { className: 'onepass-strip__count', textContent: ` · ${visited.size} of ${STEPS.length} steps visited · ` }),
      reset,
    ]),
  ]);
  const old = host.querySelector(':scope > .onepass-strip');
  if (old) old.replaceWith(strip);
  else host.prepend(strip);
}

/** Called on every page Material shows (first load and instant navigation). */
export function mountStrip() {
  recordVisit(stepAt(window.location)); // announces, and the listener below draws the strip
  render();
}

// One listener for the whole visit (the strip is redrawn in place, so none accumulate across pages).
window.addEventListener(PROGRESS_EVENT, render);
