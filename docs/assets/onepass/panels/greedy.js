/** Step 2, "One at a time": greedy generation on the reader's text, each pass drawn as it happens. */
import { DEFAULTS } from './defaults.js';
import { runFrame } from './runs.js';

export const DEFAULT_TEXT = DEFAULTS.greedy.text;
export const MAX_NEW = DEFAULTS.greedy.maxNew;

export function mountGreedy(root) {
  const frame = runFrame(root, { panel: 'greedy', text: DEFAULT_TEXT });
  frame.model.say(`Press Run: the model writes ${MAX_NEW} tokens after your text, one pass each.`);
  frame.run.addEventListener('click', () => frame.execute({ text: frame.input.value, mode: 'greedy', kvCache: frame.kv.checked, maxNew: MAX_NEW }));
  frame.showTrace('greedy');
}
