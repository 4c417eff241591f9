/**
 * The station's cross-page state in localStorage, as JSON under the `onepass.*` keys the page/panel
 * contract names. A missing, damaged or unreadable value reads as null, never as an error: storage can
 * be disabled, full, or edited by hand. Every write announces itself with an `onepass:progress` event
 * on window, so the strip and the quiz redraw without knowing who wrote.
 */

export const KEYS = {
  visited: 'onepass.visited',
  quiz: 'onepass.quiz',
  measured: 'onepass.measured',
  lastPass: 'onepass.lastPass',
  // true once the reader has agreed to download the model (it is hundreds of MB): asked once, remembered.
  consent: 'onepass.modelConsent',
};

export const PROGRESS_EVENT = 'onepass:progress';

export function read(key) {
  try {
    const raw = localStorage.getItem(key);
    return raw === null ? null : JSON.parse(raw);
  } catch {
    return null;
  }
}

function announce() {
  window.dispatchEvent(new CustomEvent(PROGRESS_EVENT));
}

export function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Storage off or full: progress lasts for this page only, which is still better than a broken page.
  }
  announce();
}

export function forget(...keys) {
  try {
    keys.forEach((key) => localStorage.removeItem(key));
  } catch {
    // Nothing was stored, so nothing is lost.
  }
  announce();
}

/** A finite number, or null: values from storage are never trusted to be numbers. */
export function finite(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The site's root URL, wherever the site is served from (this file sits in assets/onepass/). */
export const SITE_ROOT = new URL('../../', import.meta.url);
