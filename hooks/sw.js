/**
 * The station's service worker: hooks/offline.py builds site/sw.js from this template with Workbox's
 * injectManifest, which fills in the precache list with every file of the build and its revision.
 *
 * - Pages and small assets are precached at install, under a cache named for this build, and served
 *   cache-first; a new build installs beside the old one, waits until the reader agrees (the page's
 *   offline.js asks), then deletes the old build's caches.
 * - Pyodide and onnxruntime-web (tens of MB) are cached the first time a panel uses them, not at
 *   install, so reading a page never downloads them unasked; same build-named cache, same cleanup.
 * - Model chunks are not handled here: the model's loader keeps them in its own cache, under names
 *   that are their sha256, and only after the reader agreed to the download.
 * - It adds COOP/COEP to what it serves, as coi-serviceworker did: where a host cannot send those
 *   headers, the page is still cross-origin isolated, so WASM threads work.
 */
importScripts('vendor/workbox/workbox-sw.js');
workbox.setConfig({ modulePathPrefix: 'vendor/workbox/', debug: false });

// Filled in by hooks/offline.py: a hash of this file as built, which names this build's caches.
const BUILD = '__ONEPASS_BUILD__';
const RUNTIME_FOLDERS = ['vendor/pyodide/', 'vendor/ort/'];

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
workbox.routing.registerRoute(
  ({ url }) => url.origin === scope.origin && RUNTIME_FOLDERS.some((folder) => url.pathname.startsWith(scope.pathname + folder)),
  new workbox.strategies.CacheFirst({ cacheName: RUNTIME_CACHE, plugins: [isolation] }),
);

// Offline, an address the build does not have gets the site's own "not found" page, not the browser's.
workbox.routing.registerRoute(({ request }) => request.mode === 'navigate', new workbox.strategies.NetworkOnly());
workbox.routing.setCatchHandler(async ({ request }) => (request.destination === 'document'
  ? (await workbox.precaching.matchPrecache('404.html')) ?? Response.error()
  : Response.error()));

self.addEventListener('activate', (event) => {
  event.waitUntil(caches.keys().then((names) => Promise.all(names
    .filter((name) => name.startsWith('onepass-runtime-') && name.endsWith(self.registration.scope) && name !== RUNTIME_CACHE)
    .map((name) => caches.delete(name)))));
});

// The first build takes the open page at once; a later one waits for the reader (offline.js sends this).
workbox.core.clientsClaim();
self.addEventListener('message', (event) => {
  if (event.data?.type === 'SKIP_WAITING') self.skipWaiting();
});
