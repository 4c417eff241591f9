/**
 * The home page's "what a pass costs here": the median one-token pass time that the last model run left
 * in `onepass.lastPass`, or a pointer to step 2, which measures it.
 */
import { KEYS, SITE_ROOT, finite, read } from './store.js';
import { el } from './panels/dom.js';

const MS_PER_SECOND = 1000;

export function mountPassCost(root) {
  const last = read(KEYS.lastPass);
  const ms = finite(last?.ms);
  const threads = finite(last?.threads);
  const model = typeof last?.model === 'string' ? last.model : 'the model';
  const step2 = el('a', { href: new URL('one-at-a-time/', SITE_ROOT).href, textContent: 'Step 2' });
  if (ms === null || ms <= 0) {
    root.replaceChildren(el('p', {}, [step2, ' measures what one pass costs on this device, the moment you run its panel.']));
    return;
  }
  const threadText = threads === null ? '' : `, ${threads} thread${threads === 1 ? '' : 's'}`;
  root.replaceChildren(el('p', {}, [
    el('strong', { textContent: `A pass costs about ${ms.toFixed(0)} ms here.` }),
    ` That is the median time of a one-token pass of ${model} in this browser on your last run${threadText} — at most `
      + `${(MS_PER_SECOND / ms).toFixed(1)} tokens a second, one at a time. `,
    step2, ' measures it again whenever you run its panel.',
  ]));
}
