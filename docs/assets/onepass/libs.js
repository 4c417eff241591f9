/**
 * The vendored libraries that come as classic scripts (UMD globals), each loaded once, on the
 * first page that needs it. Everything is served from the site's own vendor/ folder.
 */

const VENDOR = new URL('../../vendor/', import.meta.url);
const loaded = new Map();

function script(path, global) {
  if (!loaded.has(path)) {
    loaded.set(path, new Promise((resolve, reject) => {
      const tag = Object.assign(document.createElement('script'), { src: new URL(path, VENDOR).href });
      tag.onload = () => resolve(window[global]);
      tag.onerror = () => {
        loaded.delete(path); // a failed load may be retried
        reject(new Error(`could not load ${path} from the site`));
      };
      document.head.append(tag);
    }));
  }
  return loaded.get(path);
}

function stylesheet(path) {
  const href = new URL(path, VENDOR).href;
  if (!document.querySelector(`link[href="${href}"]`)) {
    document.head.append(Object.assign(document.createElement('link'), { rel: 'stylesheet', href }));
  }
}

/** Chart.js (window.Chart). */
export const loadChart = () => script('chartjs/chart.umd.min.js', 'Chart');

/** KaTeX (window.katex), with its stylesheet and fonts. */
export function loadKatex() {
  stylesheet('katex/katex.min.css');
  return script('katex/katex.min.js', 'katex');
}
