/**
 * Typesets the maths that pymdownx.arithmatex (generic mode) leaves in `.arithmatex` spans and divs,
 * with the KaTeX served from the site's vendor/ folder. KaTeX is loaded only on pages that have maths.
 * If it cannot load, the LaTeX source stays on the page, which is still readable.
 */
import { loadKatex } from './libs.js';

const DELIMITERS = /^\\[([]([\s\S]*)\\[)\]]$/;

export async function typeset() {
  const nodes = [.../** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.arithmatex:not([data-typeset])'))];
  if (nodes.length === 0) return;
  const katex = await loadKatex();
  for (const node of nodes) {
    if (!node.isConnected) continue; // the reader moved on while KaTeX loaded
    const source = node.textContent.trim();
    const tex = source.match(DELIMITERS)?.[1] ?? source;
    katex.render(tex, node, { displayMode: node.tagName === 'DIV', throwOnError: false });
    node.dataset.typeset = '';
    // A display formula wider than a phone scrolls sideways; focusable, it scrolls from the keyboard too.
    if (node.tagName === 'DIV') node.tabIndex = 0;
  }
}
