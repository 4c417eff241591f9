/**
 * Registers the site's service worker (site/sw.js, built by hooks/offline.py), loaded once per visit by
 * overrides/main.html. Through it the site works offline after one visit, and is cross-origin isolated
 * even where the host cannot send COOP/COEP: then the first visit reloads once, when the worker takes
 * the page (as coi-serviceworker did). When a new build of the site has installed beside the old one,
 * the reader is told and chooses when to switch: a page never mixes two builds. Once the model has loaded, the
 * page asks the worker to keep Pyodide and onnxruntime-web too (keepForOffline), which says what it keeps.
 */
import { Workbox } from '../../vendor/workbox/workbox-window.prod.mjs';

const SITE_ROOT = new URL('../../', import.meta.url);
const RELOADED = 'onepass.isolationReload'; // sessionStorage: reload for isolation at most once per tab
// A first visit's worker installs (keeps the pages, about 4 MB) before it answers; one that never does has failed.
const ACTIVE_WITHIN_MS = 120_000;

function reloadForIsolation() {
  try {
    if (self.crossOriginIsolated || sessionStorage.getItem(RELOADED)) return;
    sessionStorage.setItem(RELOADED, '1');
  } catch {
    return; // without storage a reload could repeat forever; one thread is slower, not broken
  }
  location.reload();
}

/**
 * Ask the site's service worker `type` (hooks/sw.js: KEEP_RUNTIMES) once it is active, even while
 * it does not control this page yet (a visit's first page): {build, runtimes: {kept, total, bytes, missing}}, or
 * null where this browser has no service worker for the site (or, with `waitForActive` false, none active yet).
 */
async function askWorker(type, waitForActive = true) {
  if (!('serviceWorker' in navigator)) return null;
  const registration = await navigator.serviceWorker.getRegistration(SITE_ROOT.href).catch(() => null);
  if (!registration || !(waitForActive || registration.active)) return null;
  let waited;
  const { active } = await Promise.race([navigator.serviceWorker.ready, new Promise((_, fail) => {
    waited = setTimeout(() => fail(new Error('the service worker did not start')), ACTIVE_WITHIN_MS);
  })]).finally(() => clearTimeout(waited));
  const { port1, port2 } = new MessageChannel();
  const answer = new Promise((resolve) => { port1.onmessage = ({ data }) => resolve(data); });
  active.postMessage({ type }, [port2]);
  const data = await answer;
  if (data.error) throw new Error(data.error);
  return data;
}

/** Once the model has loaded: keep the runtimes it ran on, whichever page fetched them. Resolves to what is kept. */
export const keepForOffline = () => askWorker('KEEP_RUNTIMES');

/**
 * Once a load has failed: the runtimes from what the worker keeps from now on, online too. Online the browser fetches
 * their WebAssembly modules itself (hooks/sw.js says why), and a network that fails while the browser says it is online
 * (a Wi-Fi without internet, a host that is down) fails them, where the kept copies would do. The retry runs on those.
 */
export const useKeptRuntimes = () => askWorker('USE_KEPT_RUNTIMES', false);

function offerUpdate(wb) {
  if (document.querySelector('.onepass-update')) return;
  const use = Object.assign(document.createElement('button'), { type: 'button', className: 'md-button md-button--primary', textContent: 'Reload now' });
  const bar = Object.assign(document.createElement('div'), { className: 'onepass-update', role: 'status' });
  bar.append('A new version of this station has been downloaded. ', use);
  use.addEventListener('click', () => {
    use.disabled = true;
    wb.messageSkipWaiting(); // the 'controlling' event below reloads the page once the new build has taken over
  });
  document.body.append(bar);
}

if ('serviceWorker' in navigator) {
  const wb = new Workbox(new URL('sw.js', SITE_ROOT).href);
  wb.addEventListener('controlling', (event) => (event.isUpdate ? location.reload() : reloadForIsolation()));
  wb.addEventListener('waiting', () => offerUpdate(wb));
  wb.register().catch((err) => console.warn('The service worker could not be registered; the site works, but not offline.', err));
}
