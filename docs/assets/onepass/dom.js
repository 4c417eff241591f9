/** Small DOM helpers for the panels. Text always goes in through textContent, never as HTML. */

export function el(tag, props = {}, children = []) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

export function button(label, className = '', primary = false) {
  return el('button', { type: 'button', className: `md-button ${primary ? 'md-button--primary ' : ''}${className}`, textContent: label });
}

export function formatBytes(n) {
  return `${(n / 1e6).toFixed(1)} MB`;
}

export function ms(seconds) {
  return `${(seconds * 1000).toFixed(1)} ms`;
}

/** A token's text with its spaces and line breaks made visible (" Berlin" and "Berlin" are different tokens). */
export function visible(piece) {
  return piece.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥') || '∅';
}
