/**
 * The eight steps of the station, in nav order (mkdocs.yml lists the same pages; the site test checks
 * that the two agree). A step is identified by its number, 1..8, in `onepass.visited`.
 */
import { SITE_ROOT } from './store.js';

export const STEPS = [
  { path: '', title: 'One token per pass' },
  { path: 'one-at-a-time/', title: 'One at a time' },
  { path: 'all-at-once/', title: 'All at once' },
  { path: 'you-guess/', title: 'You guess' },
  { path: 'copy-and-check/', title: 'Copy and check' },
  { path: 'the-real-thing/', title: 'The real thing' },
  { path: 'name-it/', title: 'Name it' },
  { path: 'check-yourself/', title: 'Check yourself' },
].map((step, index) => ({ ...step, number: index + 1, url: new URL(step.path, SITE_ROOT).href }));

/** The step shown at `location`, or null (the runtime page, search results, a 404). */
export function stepAt(location) {
  const path = location.pathname.replace(/index\.html$/, '');
  return STEPS.find((step) => new URL(step.url).pathname === path) ?? null;
}

export function stepUrl(number) {
  return STEPS[number - 1].url;
}
