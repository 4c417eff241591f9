/**
 * Model loading for the worker: the site's manifest, then every file's chunks, each fetched with
 * progress, checked against its sha256 and kept in the Cache API under a name versioned by the
 * manifest's own hash (older versions are deleted). Failures are LoadErrors with a code the page
 * can show and a retry that starts over (chunks already cached are not fetched again).
 */

const CACHE_PREFIX = 'onepass-model-';
// A few chunks in flight at once, so hashing and caching one overlaps fetching the next.
const PARALLEL_CHUNKS = 3;

export class LoadError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code; // not_found | truncated | hash_mismatch | quota | network
    this.retryable = true;
  }
}

export async function sha256Hex(bytes) {
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function fetchOk(url, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch (err) {
    throw new LoadError('network', `could not fetch ${url}: ${err.message}`);
  }
  if (!response.ok) {
    const code = response.status === 404 ? 'not_found' : 'network';
    throw new LoadError(code, `${url} answered ${response.status} ${response.statusText}`);
  }
  return response;
}

/** The cache for this manifest version, with every older version removed; null where the Cache API is missing. */
async function openCache(version) {
  if (!globalThis.caches) return null;
  const name = CACHE_PREFIX + version;
  for (const old of await caches.keys()) {
    if (old.startsWith(CACHE_PREFIX) && old !== name) await caches.delete(old);
  }
  return caches.open(name);
}

async function readWithProgress(response, onBytes) {
  const parts = [];
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    received += value.byteLength;
    onBytes(value.byteLength);
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}

async function cachedChunk(cache, url, chunk) {
  const hit = cache && (await cache.match(url));
  if (!hit) return null;
  const bytes = new Uint8Array(await hit.arrayBuffer());
  // Only chunks that passed their sha256 are ever stored, in a cache named after this manifest's hash, so a
  // hit is not hashed again (that took seconds on every visit); a short entry is fetched again.
  if (bytes.byteLength === chunk.size) return bytes;
  await cache.delete(url);
  return null;
}

async function loadChunk(cache, url, chunk, onBytes) {
  const hit = await cachedChunk(cache, url, chunk);
  if (hit) {
    onBytes(chunk.size);
    return hit;
  }
  const response = await fetchOk(url, { cache: 'no-store' });
  let counted = 0;
  const bytes = await readWithProgress(response, (n) => {
    counted += n;
    onBytes(n);
  });
  if (bytes.byteLength !== chunk.size) {
    onBytes(chunk.size - counted);
    throw new LoadError('truncated', `${url}: got ${bytes.byteLength} bytes, the manifest says ${chunk.size}`);
  }
  if ((await sha256Hex(bytes)) !== chunk.sha256) {
    throw new LoadError('hash_mismatch', `${url}: its sha256 differs from the manifest's (a damaged or stale file)`);
  }
  if (cache) {
    try {
      await cache.put(url, new Response(bytes));
    } catch (err) {
      if (err.name === 'QuotaExceededError') {
        throw new LoadError('quota', 'the browser has no room left to keep the model; free some site data and retry');
      }
      throw err;
    }
  }
  return bytes;
}

/**
 * Fetch the manifest at `modelUrl` (a folder URL ending in /) and every file it lists.
 * onProgress(loadedBytes, totalBytes) is called as bytes arrive. Returns { manifest, files, cacheName }
 * where files maps each file name to its bytes.
 */
export async function loadModel(modelUrl, onProgress) {
  const manifestBytes = new Uint8Array(await (await fetchOk(new URL('manifest.json', modelUrl), { cache: 'no-cache' })).arrayBuffer());
  const manifest = JSON.parse(new TextDecoder().decode(manifestBytes));
  const version = (await sha256Hex(manifestBytes)).slice(0, 16);
  const cache = await openCache(version);
  const total = manifest.files.reduce((sum, file) => sum + file.size, 0);
  let loaded = 0;
  const onBytes = (n) => {
    loaded += n;
    onProgress(loaded, total);
  };
  onProgress(0, total);
  const files = {};
  for (const file of manifest.files) {
    const chunks = file.chunks ?? [{ name: file.name, size: file.size, sha256: file.sha256 }];
    if (chunks.reduce((sum, chunk) => sum + chunk.size, 0) !== file.size) {
      throw new LoadError('truncated', `${file.name}: the manifest's chunks do not add up to ${file.size} bytes`);
    }
    // One buffer per file, filled chunk by chunk, so a large model is never held twice over.
    const whole = new Uint8Array(file.size);
    const offsets = chunks.map((_, i) => chunks.slice(0, i).reduce((sum, chunk) => sum + chunk.size, 0));
    await inParallel(chunks.map((chunk, i) => async () => {
      whole.set(await loadChunk(cache, new URL(chunk.name, modelUrl).href, chunk, onBytes), offsets[i]);
    }), PARALLEL_CHUNKS);
    files[file.name] = whole;
  }
  return { manifest, files, cacheName: cache ? CACHE_PREFIX + version : null };
}

/** Run the async `tasks`, at most `limit` at a time; rejects with the first failure. */
async function inParallel(tasks, limit) {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
}
