/**
 * Model loading for the worker: the site's manifest, then every file's chunks, each fetched with
 * progress, checked against its sha256 and kept in the Cache API. Chunks are named after their own
 * sha256 (hooks/model.py), so the cache is versioned by its keys: an entry is only ever stored after
 * passing its hash, a new build's manifest names new chunks, and once a manifest has loaded, the
 * entries it does not name are deleted. Failures are LoadErrors with a code and a plain message the
 * page can show, and a retry that fetches only what is missing.
 */

const CACHE_NAME = 'onepass-model';
// Before chunks were named by their hash, each manifest had a cache of its own under this prefix.
const OLD_CACHE_PREFIX = 'onepass-model-';
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

/** `url`'s response, or a LoadError that names `what` (the reader's words for the file) and says what to do. */
async function fetchOk(url, what, options) {
  let response;
  try {
    response = await fetch(url, options);
  } catch {
    throw new LoadError('network', `${what} could not be downloaded: the connection failed. Check it and retry`);
  }
  if (!response.ok) {
    const code = response.status === 404 ? 'not_found' : 'network';
    const why = response.status === 404 ? 'is missing from the site' : `could not be downloaded (the server answered ${response.status})`;
    throw new LoadError(code, `${what} ${why}. Retry, or reload the page later`);
  }
  return response;
}

/** The model's cache, without the per-manifest caches of older builds; null where the Cache API is missing. */
async function openCache() {
  if (!globalThis.caches) return null;
  for (const old of await caches.keys()) {
    if (old.startsWith(OLD_CACHE_PREFIX)) await caches.delete(old);
  }
  return caches.open(CACHE_NAME);
}

/** Delete every cached chunk that `urls` (the current manifest's) does not name: an older model's. */
async function prune(cache, urls) {
  const keep = new Set(urls);
  for (const request of await cache.keys()) {
    if (!keep.has(request.url)) await cache.delete(request);
  }
}

async function readWithProgress(response, what, onBytes) {
  const parts = [];
  let received = 0;
  const reader = response.body.getReader();
  for (;;) {
    let step;
    try {
      step = await reader.read();
    } catch {
      throw new LoadError('network', `the connection dropped while ${what} was downloading. Retry: the parts already here are kept`);
    }
    const { done, value } = step;
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

async function loadChunk(cache, url, chunk, what, onBytes) {
  const hit = await cachedChunk(cache, url, chunk);
  if (hit) {
    onBytes(chunk.size);
    return hit;
  }
  // The name is the content's hash, so the HTTP cache may answer; the hash below checks what it gives.
  const response = await fetchOk(url, what);
  let counted = 0;
  const bytes = await readWithProgress(response, what, (n) => {
    counted += n;
    onBytes(n);
  });
  if (bytes.byteLength !== chunk.size) {
    onBytes(chunk.size - counted);
    throw new LoadError('truncated', `${what} arrived incomplete (${bytes.byteLength} of ${chunk.size} bytes). Retry`);
  }
  if ((await sha256Hex(bytes)) !== chunk.sha256) {
    throw new LoadError('hash_mismatch', `${what} arrived damaged (its checksum is wrong). Retry, or reload the page later`);
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

/** The site's model manifest at `modelUrl`, or a LoadError that says why there is none. */
export async function readManifest(modelUrl) {
  const response = await fetchOk(new URL('manifest.json', modelUrl), "the model's manifest", { cache: 'no-cache' });
  try {
    return await response.json();
  } catch {
    throw new LoadError('hash_mismatch', "the model's manifest arrived damaged. Retry, or reload the page later");
  }
}

/**
 * Fetch the manifest at `modelUrl` (a folder URL ending in /) and every file it lists, smallest first.
 * onProgress(loadedBytes, totalBytes) is called as bytes arrive; onFile(name, bytes), if given, as each
 * file completes, so a caller can start on the tokenizer while the weights still arrive. Returns
 * { manifest, files } where files maps each file name to its bytes.
 */
export async function loadModel(modelUrl, onProgress, onFile = () => {}) {
  const manifest = await readManifest(modelUrl);
  const cache = await openCache();
  const total = manifest.files.reduce((sum, file) => sum + file.size, 0);
  let loaded = 0;
  const onBytes = (n) => {
    loaded += n;
    onProgress(loaded, total);
  };
  onProgress(0, total);
  const files = {};
  const finished = [];
  for (const file of [...manifest.files].sort((a, b) => a.size - b.size)) {
    const chunks = file.chunks ?? [{ name: file.name, size: file.size, sha256: file.sha256 }];
    if (chunks.reduce((sum, chunk) => sum + chunk.size, 0) !== file.size) {
      throw new LoadError('truncated', `${file.name}: the manifest's chunks do not add up to ${file.size} bytes`);
    }
    // One buffer per file, filled chunk by chunk, so a large model is never held twice over.
    const whole = new Uint8Array(file.size);
    const offsets = chunks.map((_, i) => chunks.slice(0, i).reduce((sum, chunk) => sum + chunk.size, 0));
    await inParallel(chunks.map((chunk, i) => async () => {
      const what = `part ${i + 1} of ${chunks.length} of the model's ${file.name} (${chunk.name})`;
      whole.set(await loadChunk(cache, new URL(chunk.name, modelUrl).href, chunk, what, onBytes), offsets[i]);
    }), PARALLEL_CHUNKS);
    files[file.name] = whole;
    // After the next file's first reads are under way, so the two overlap.
    finished.push(new Promise((next) => setTimeout(next, 0)).then(() => onFile(file.name, whole)));
  }
  await Promise.all(finished);
  if (cache) await prune(cache, manifest.files.flatMap((file) => (file.chunks ?? [file]).map((c) => new URL(c.name, modelUrl).href)));
  return { manifest, files };
}

/** Run the async `tasks`, at most `limit` at a time; rejects with the first failure. */
async function inParallel(tasks, limit) {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
}
