/**
 * The station's service worker: hooks/offline.py builds site/sw.js from this template with Workbox's
 * injectManifest, which fills in the precache list with every file of the build and its revision.
 *
 * - Pages and small assets are precached at install, under a cache named for this build, and served
 *   cache-first; a new build installs beside the old one, waits until the reader agrees (the page's
 *   offline.js asks), then deletes the old build's caches.
 * - Pyodide and onnxruntime-web (tens of MB) are not fetched at install, so reading a page never downloads
 *   them unasked. They are cached, whole, when the page says the model has loaded (KEEP_RUNTIMES below), under
 *   the same build-named cache and cleanup, and served from it, except their WebAssembly modules while online:
 *   the browser fetches those itself, from its HTTP cache as a rule, where V8 keeps each module compiled, and a
 *   module this worker serves is compiled afresh on every visit, about 1 s of a returning reader's load
 *   (benchmarks/FINDINGS.md, "The runtimes served by the service worker"). Offline, or once a page has found
 *   the network failing (USE_KEPT_RUNTIMES), this worker serves them too.
 * - Model chunks are not handled here: the model's loader keeps them in its own cache, under names
 *   that are their sha256, and only after the reader agreed to the download.
 * - It adds COOP/COEP to what it serves, as coi-serviceworker did: where a host cannot send those
 *   headers, the page is still cross-origin isolated, so WASM threads work.
 */
importScripts('vendor/workbox/workbox-sw.js');
workbox.setConfig({ modulePathPrefix: 'vendor/workbox/', debug: false });

// Filled in by hooks/offline.py: a hash of this file as built and of the runtimes' contents; it names this build's caches.
const BUILD = '__ONEPASS_BUILD__';
// Filled in by hooks/offline.py: every file of Pyodide and onnxruntime-web in this build, {url (site-relative), size}.
const RUNTIME_FILES = __ONEPASS_RUNTIME_FILES__;

// Names like onepass-precache-<build>-<scope>: Workbox's cleanup deletes the caches of other builds of this
// scope, which it recognises by "-precache-" and the scope in their names.
workbox.core.setCacheNameDetails({ prefix: 'onepass', precache: `precache-${BUILD}`, runtime: `runtime-${BUILD}` });
const RUNTIME_CACHE = workbox.core.cacheNames.runtime;

// Filled in by hooks/offline.py from hooks/headers.py: the cross-origin-isolation headers.
const ISOLATION = __ONEPASS_ISOLATION__;

/** A Workbox plugin: every response this worker serves carries the isolation headers. */
const isolation = {
  handlerWillRespond: async ({ response }) => {
    // Opaque and redirect responses cannot be rebuilt; the site never serves either to itself.
    if (!response || response.type === 'opaque' || response.type === 'opaqueredirect') return response;
    const headers = new Headers(response.headers);
    for (const [name, value] of Object.entries(ISOLATION)) headers.set(name, value);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  },
};

workbox.precaching.addPlugins([isolation]);
workbox.precaching.precacheAndRoute(self.__WB_MANIFEST);
workbox.precaching.cleanupOutdatedCaches();

const scope = new URL(self.registration.scope);
const RUNTIME_URLS = new Set(RUNTIME_FILES.map(({ url }) => new URL(url, scope).href));
let keptOnly = false; // a page found the network failing while the browser said it was online (USE_KEPT_RUNTIMES)
// Online, the modules go to the browser; the rest (worker scripts among them) stays here, to carry the isolation headers.
const fromTheBrowser = (url) => url.pathname.endsWith('.wasm') && navigator.onLine && !keptOnly;
workbox.routing.registerRoute(
  ({ url }) => RUNTIME_URLS.has(url.href) && !fromTheBrowser(url),
  new workbox.strategies.CacheFirst({ cacheName: RUNTIME_CACHE, plugins: [isolation] }),
);

// Offline, an address the build does not have gets the site's own "not found" page, not the browser's.
workbox.routing.registerRoute(({ request }) => request.mode === 'navigate', new workbox.strategies.NetworkOnly());
workbox.routing.setCatchHandler(async ({ request }) => (request.destination === 'document'
  ? (await workbox.precaching.matchPrecache('404.html')) ?? Response.error()
  : Response.error()));

/** What this browser keeps for offline use of the runtimes: {kept, total, bytes, missing: [url]}. */
async function runtimeStatus() {
  const cache = await caches.open(RUNTIME_CACHE);
  const kept = await Promise.all(RUNTIME_FILES.map(({ url }) => cache.match(new URL(url, scope))));
  const missing = RUNTIME_FILES.filter((_, i) => !kept[i]).map(({ url }) => url);
  const bytes = RUNTIME_FILES.reduce((sum, { size }) => sum + size, 0);
  return { kept: RUNTIME_FILES.length - missing.length, total: RUNTIME_FILES.length, bytes, missing };
}

let keeping = null; // one fill of the runtime cache at a time, however many pages ask
/**
 * Fetch the runtime files not yet kept into this build's runtime cache. The browser has just fetched them for
 * the page (its HTTP cache usually answers); one that fails is left missing and asked again by the next page.
 */
function keepRuntimes() {
  keeping ??= (async () => {
    const cache = await caches.open(RUNTIME_CACHE);
    const { missing } = await runtimeStatus();
    await Promise.allSettled(missing.map((url) => cache.add(new URL(url, scope))));
  })().finally(() => { keeping = null; });
  return keeping.then(runtimeStatus);
}

/** From now on (while this worker runs) the runtimes come from what is kept, online too. */
function useKeptRuntimes() {
  keptOnly = true;
  return runtimeStatus();
}

// The page's requests (offline.js), answered on the port they came with: KEEP_RUNTIMES once the model has loaded,
// USE_KEPT_RUNTIMES once a load has failed, each answered with what is kept. Pages and small assets are kept
// already: this worker is active only once they are.
const ANSWERS = { KEEP_RUNTIMES: keepRuntimes, USE_KEPT_RUNTIMES: useKeptRuntimes };

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys().then((names) => Promise.all(names
    .filter((name) => name.startsWith('onepass-runtime-') && name.endsWith(self.registration.scope) && name !== RUNTIME_CACHE)
    .map((name) => caches.delete(name)))));
});

// The first build takes the open page at once; a later one waits for the reader (offline.js sends this).
workbox.core.clientsClaim();
self.addEventListener('message', (event) => {
  const type = event.data?.type;
  if (type === 'SKIP_WAITING') self.skipWaiting();
  const answer = ANSWERS[type];
  if (answer && event.ports[0]) {
    event.waitUntil(answer().then((runtimes) => event.ports[0].postMessage({ build: BUILD, runtimes }),
      (err) => event.ports[0].postMessage({ build: BUILD, error: String(err) })));
  }
});
