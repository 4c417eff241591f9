/**
 * Registers the site's service worker (site/sw.js, built by hooks/offline.py), loaded once per visit by
 * overrides/main.html. Through it the site works offline after one visit, and is cross-origin isolated
 * even where the host cannot send COOP/COEP: then the first visit reloads once, when the worker takes
 * the page (as coi-serviceworker did). When a new build of the site has installed beside the old one,
 * the reader is told and chooses when to switch: a page never mixes two builds.
 */
import { Workbox } from '../../vendor/workbox/workbox-window.prod.mjs';

const SITE_ROOT = new URL('../../', import.meta.url);
const RELOADED = 'onepass.isolationReload'; // sessionStorage: reload for isolation at most once per tab

function reloadForIsolation() {
  try {
    if (self.crossOriginIsolated || sessionStorage.getItem(RELOADED)) return;
    sessionStorage.setItem(RELOADED, '1');
  } catch {
    return; // without storage a reload could repeat forever; one thread is slower, not broken
  }
  location.reload();
}

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
