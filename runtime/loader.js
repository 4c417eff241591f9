/**
 * Model loading for the worker: the site's manifest, then every file's chunks, each fetched with
 * progress, decompressed (they are served zstd-compressed, zstd.js), checked against its sha256 and kept in the
 * browser uncompressed. Chunks are named after the sha256 of their uncompressed bytes (hooks/model.py), so the store
 * is versioned by its keys: an entry is only ever stored after
 * passing its hash, a new build's manifest names new chunks, and once a manifest has loaded, the
 * entries it does not name are deleted. Failures are LoadErrors with a code and a plain message the
 * page can show, and a retry that fetches only what is missing.
 *
 * Where the chunks are kept: files in the origin private file system (OPFS), read with a worker's
 * synchronous access handles straight into the model's buffer. Measured in Chromium on a 2-core machine,
 * with a persistent profile, reading 624 MB in 13 chunks: 0.35–0.40 s from OPFS, 1.3–3.3 s from the
 * Cache API (each chunk's arrayBuffer, then copied into place). Where a worker has no OPFS, the Cache
 * API keeps them, as it did before; chunks an older build kept there are carried over, then deleted.
 */

import { WorkerChannel } from './bridge.js';
import { OnepassError } from './errors.js';
import { ZSTD_MAGIC, ZstdDecoder, ZstdError } from './zstd.js';

// The OPFS folder, and the Cache API cache, that hold the chunks.
export const STORE_NAME = 'onepass-model';
// Before chunks were named by their hash, each manifest had a cache of its own under this prefix.
const OLD_CACHE_PREFIX = 'onepass-model-';
// A few chunks in flight at once, so hashing and storing one overlaps fetching the next.
const PARALLEL_CHUNKS = 3;
// Another tab reading or writing the same chunk holds its access handle for a moment: wait that long.
const LOCK_RETRIES = 40;
const LOCK_WAIT_MS = 50;
// While another tab downloads a chunk this tab needs, progress is said again this often: the page counts a run that
// waits for the model and hears nothing for a while as a hung worker (client.js, silentMs).
const WAITING_REPORT_MS = 1000;

export class LoadError extends OnepassError {
  constructor(code, message) {
    super(code, message, { retryable: true }); // not_found | truncated | hash_mismatch | quota | network
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

const quotaError = () => new LoadError('quota', 'the browser has no room left to keep the model; free some site data and retry');

/** The Cache API's store, without the per-manifest caches of older builds; null where it is missing. */
async function openCache() {
  if (!globalThis.caches) return null;
  for (const old of await caches.keys()) {
    if (old.startsWith(OLD_CACHE_PREFIX)) await caches.delete(old);
  }
  return caches.open(STORE_NAME);
}

/** Chunks in the Cache API, keyed by their URL. */
class CacheStore {
  constructor(cache) {
    this.cache = cache;
  }

  /** Fill `into` with the chunk at `url`; false when it is not kept (a short entry is deleted). */
  async read(url, into) {
    const hit = await this.cache.match(url);
    if (!hit) return false;
    const bytes = new Uint8Array(await hit.arrayBuffer());
    if (bytes.byteLength === into.byteLength) {
      into.set(bytes);
      return true;
    }
    await this.cache.delete(url);
    return false;
  }

  async keep(url, bytes) {
    await this.write(url, bytes);
  }

  close() {}

  async write(url, bytes) {
    try {
      await this.cache.put(url, new Response(bytes));
    } catch (err) {
      throw err.name === 'QuotaExceededError' ? quotaError() : err;
    }
  }

  /** Delete every chunk whose URL `urls` does not name: an older model's. */
  async prune(urls) {
    const keep = new Set(urls);
    for (const request of await this.cache.keys()) {
      if (!keep.has(request.url)) await this.cache.delete(request);
    }
  }
}

/** `file`'s synchronous access handle, waiting while another tab holds it; null if it stays held. */
async function accessHandle(file) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await file.createSyncAccessHandle();
    } catch (err) {
      if (err.name !== 'NoModificationAllowedError' || attempt === LOCK_RETRIES) return null;
      await new Promise((wait) => setTimeout(wait, LOCK_WAIT_MS));
    }
  }
}

/** A chunk's file name: the last part of its URL, its sha256 (hooks/model.py). */
const fileName = (url) => url.slice(url.lastIndexOf('/') + 1);

/** Write `bytes` as the file `name` of the OPFS `folder`, whole; false if another tab is writing it. */
export async function writeFile(folder, name, bytes) {
  const access = await accessHandle(await folder.getFileHandle(name, { create: true }));
  if (!access) return false;
  try {
    access.truncate(0);
    access.write(bytes, { at: 0 });
    access.flush();
    return true;
  } catch (err) {
    throw err.name === 'QuotaExceededError' ? quotaError() : err;
  } finally {
    access.close();
  }
}

/**
 * Chunks as OPFS files named by their hash; `legacy` is the Cache API's store, read once and then emptied.
 * A downloaded chunk is written on a thread of its own (store-worker.js), handed over rather than copied: written
 * here, its 50 MB held up the fetches, hashing and copies of the chunks beside it. Real model, Chromium, 2 cores, six
 * first visits each, alternating in one run: the bytes in 5.8-6.5 s (median 6.3) against 5.8-7.7 s (7.0), the load
 * call 7.6-8.6 s (8.3) against 7.5-9.8 s (9.0).
 */
class FolderStore {
  constructor(folder, legacy) {
    this.folder = folder;
    this.legacy = legacy;
    this.started = undefined; // the store worker's channel once the first keep() asks for it; null where there is none
    this.handedOver = 0; // chunks the store worker wrote
  }

  /** The store worker's channel, started once; null where a worker cannot start one (then chunks are written here). */
  get writer() {
    if (this.started === undefined) {
      try {
        this.started = new WorkerChannel(new Worker(new URL('./store-worker.js', import.meta.url), { type: 'module' }));
      } catch {
        this.started = null;
      }
    }
    return this.started;
  }

  async read(url, into) {
    let file;
    try {
      file = await this.folder.getFileHandle(fileName(url));
    } catch {
      // Not here: an older build may have kept it in the Cache API.
      if (!(this.legacy && (await this.legacy.read(url, into)))) return false;
      await this.write(url, into).catch(() => {}); // not kept again is fetched again, no worse
      return true;
    }
    const access = await accessHandle(file);
    if (!access) return false;
    try {
      // Written whole or not at all as far as a reader can tell: a short file is fetched again.
      return access.getSize() === into.byteLength && access.read(into, { at: 0 }) === into.byteLength;
    } finally {
      access.close();
    }
  }

  async write(url, bytes) {
    await writeFile(this.folder, fileName(url), bytes);
  }

  /** Keep a downloaded chunk, taking its bytes (their buffer is empty afterwards where the store worker took it). */
  async keep(url, bytes) {
    const writer = this.writer;
    if (!writer) return this.write(url, bytes);
    try {
      if (await writer.request('write', { name: fileName(url), bytes }, undefined, [bytes.buffer])) this.handedOver += 1;
    } catch (err) {
      if (err.code === 'quota') throw quotaError();
      // The store worker failed otherwise: this chunk is fetched again next visit (no worse), the next ones are
      // written here.
      this.close();
      this.started = null;
    }
  }

  close() {
    this.started?.worker.terminate();
    this.started = undefined;
  }

  async prune(urls) {
    const keep = new Set(urls.map(fileName));
    const names = [];
    for await (const name of this.folder.keys()) names.push(name);
    for (const name of names.filter((n) => !keep.has(n))) await this.folder.removeEntry(name).catch(() => {});
    if (this.legacy) await caches.delete(STORE_NAME);
  }
}

/** Where this worker keeps the chunks: OPFS where it can, else the Cache API, else nowhere (null). */
async function openStore() {
  const cache = await openCache().catch(() => null);
  const legacy = cache && new CacheStore(cache);
  if (globalThis.FileSystemFileHandle?.prototype.createSyncAccessHandle && navigator.storage?.getDirectory) {
    try {
      return new FolderStore(await (await navigator.storage.getDirectory()).getDirectoryHandle(STORE_NAME, { create: true }), legacy);
    } catch {
      // A private window may refuse OPFS: fall back to the Cache API.
    }
  }
  return legacy;
}

/** Whether `bytes` start as a zstd frame does. A chunk is served zstd-compressed; a host that stores it decompressed,
 * or sends it with its own Content-Encoding: zstd, hands over plain bytes, which never start so (hooks/model.py cuts the
 * pieces so). A host's gzip on top the browser undoes before the loader sees the bytes. */
const startsZstd = (bytes) => bytes.byteLength >= ZSTD_MAGIC.length && ZSTD_MAGIC.every((byte, i) => bytes[i] === byte);

/**
 * The chunk's bytes from `response`, decompressed if they arrive zstd-compressed, written into `into` as they come
 * (no parts to join after). onBytes is told the bytes on the wire: as they arrive if compressed, in proportion if
 * plain. Returns the uncompressed length, which may differ from `into`'s: a longer body is counted, not written past
 * the end. A broken connection is a 'network' LoadError, bytes that do not decompress a 'hash_mismatch', compressed
 * bytes that stop short a 'truncated'.
 */
async function readInto(response, chunk, what, onBytes, into) {
  const network = response.body.getReader();
  let decoder = null;
  let received = 0;
  const write = (bytes) => {
    if (received + bytes.byteLength <= into.byteLength) into.set(bytes, received);
    received += bytes.byteLength;
  };
  const damaged = () => new LoadError('hash_mismatch', `${what} arrived damaged (it does not decompress). Retry, or reload the page later`);
  let complete = false;
  try {
    for (let first = true; ; first = false) {
      let step;
      try {
        step = await network.read();
      } catch {
        throw new LoadError('network', `the connection dropped while ${what} was downloading. Retry: the parts already here are kept`);
      }
      if (step.done) break;
      if (first && startsZstd(step.value)) {
        try {
          decoder = await ZstdDecoder.create();
        } catch {
          throw new LoadError('network', `the decompressor for ${what} could not be downloaded. Check the connection and retry`);
        }
      }
      const wire = decoder || !chunk.download_size ? 1 : chunk.download_size / chunk.size;
      onBytes(step.value.byteLength * wire);
      if (!decoder) {
        write(step.value);
        continue;
      }
      try {
        decoder.push(step.value, write);
      } catch (err) {
        if (err instanceof ZstdError) throw damaged();
        throw err;
      }
    }
    try {
      decoder?.end();
    } catch {
      throw new LoadError('truncated', `${what} arrived incomplete (its compressed bytes stop short). Retry`);
    }
    complete = true;
    return received;
  } finally {
    decoder?.free();
    if (!complete) network.cancel().catch(() => {});
  }
}

/** A chunk's bytes on the wire: compressed where the site says so (hooks/model.py), else its size. */
const wireSize = (chunk) => chunk.download_size ?? chunk.size;

/**
 * The chunk at `url`, from the store or else fetched and checked against its sha256 (of its uncompressed bytes, so
 * one check covers the wire, the decompression and a host's own compression alike): { bytes, fresh }, where fresh
 * says it was fetched (for the caller to keep once it has used the bytes). The store keeps the uncompressed bytes,
 * so a return visit reads them straight into place.
 */
async function loadChunk(store, url, chunk, what, onBytes) {
  const bytes = new Uint8Array(chunk.size);
  // Only chunks that passed their sha256 are ever stored, under that hash, so a hit is not hashed again
  // (that took seconds on every visit).
  if (store && (await store.read(url, bytes))) {
    onBytes(wireSize(chunk));
    return { bytes, fresh: false };
  }
  // With a store, the HTTP cache keeps no second copy (no-store): writing the model's bytes to disk twice cost
  // about 0.9 s of a first visit (Chromium, 2 cores, 5.2-5.5 s against 6.0-6.5 s for the bytes, same run). With
  // none, the HTTP cache is all there is: the name is the content's hash, so it may answer, and the hash below
  // checks what it gives.
  const response = await fetchOk(url, what, store ? { cache: 'no-store' } : undefined);
  let counted = 0;
  const received = await readInto(response, chunk, what, (n) => {
    counted += n;
    onBytes(n);
  }, bytes);
  // The progress ends at the chunk's wire size however the bytes came (a host's own compression, a short body).
  onBytes(wireSize(chunk) - counted);
  if (received < chunk.size) {
    throw new LoadError('truncated', `${what} arrived incomplete (${received} of ${chunk.size} bytes). Retry`);
  }
  if (received > chunk.size || (await sha256Hex(bytes)) !== chunk.sha256) {
    throw new LoadError('hash_mismatch', `${what} arrived damaged (its checksum is wrong). Retry, or reload the page later`);
  }
  return { bytes, fresh: true };
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
 * Every file the site serves for the model: the model's own, then its draft model's (hooks/model.py's `draft`), each
 * draft file marked `draft: true`. Names are the keys of loadModel's `files`, so the draft's differ from the model's.
 */
export function servedFiles(manifest) {
  return [...manifest.files, ...(manifest.draft?.files ?? []).map((file) => ({ ...file, draft: true }))];
}

/** Where place() puts a file's bytes: anything that takes them, chunk by chunk, at their offsets. */
/** @typedef {{set(bytes: Uint8Array, offset: number): void}} Filled */

/**
 * Fetch the manifest at `modelUrl` (a folder URL ending in /) and every file it lists (the draft model's too:
 * servedFiles), smallest first and the graph last.
 * onProgress(loadedBytes, totalBytes, elsewhere) is called as bytes arrive (bytes on the wire: compressed), and every
 * second while this tab waits for
 * chunks another tab is downloading (`elsewhere` true, oneTabAtATime); onFile(name, bytes), if given, as each
 * file completes, so a caller can start on the tokenizer while the weights still arrive. place(file, manifest),
 * if given, says where a file's bytes go: anything with a Uint8Array's set(bytes, offset), or a promise of one
 * (chunks are fetched meanwhile, at most a few held while they wait); by default a Uint8Array of the file's size.
 * Returns { manifest, files, kept, keptApart } where files maps each file name to what place gave, kept says every
 * chunk is now in the browser's store (none where there is no store), and keptApart counts the downloaded chunks
 * written by the store worker (store-worker.js).
 * @param {URL} modelUrl
 * @param {(loaded: number, total: number, elsewhere: boolean) => void} onProgress
 * @param {(name: string, bytes: Uint8Array) => void} [onFile]
 * @param {(file: Object, manifest: Object) => Filled | Promise<Filled>} [place]
 */
export async function loadModel(modelUrl, onProgress, onFile = () => {}, place = (file) => new Uint8Array(file.size)) {
  const manifest = await readManifest(modelUrl);
  const store = await openStore();
  const listed = servedFiles(manifest);
  // Progress counts bytes on the wire (compressed), as the site states the download's size.
  const total = listed.reduce((sum, file) => sum + (file.chunks ?? [file]).reduce((n, c) => n + wireSize(c), 0), 0);
  let loaded = 0;
  const waits = new Set(); // the chunks this tab waits for while another tab downloads them
  const report = () => onProgress(loaded, total, waits.size > 0);
  const onBytes = (n) => {
    loaded += n;
    report();
  };
  const waiting = (chunk) => (now) => {
    if (now) waits.add(chunk);
    else waits.delete(chunk);
    report();
  };
  report();
  const files = {};
  const finished = [];
  try {
    // Smallest first, the graph last: its place waits for ort's start, and the tokenizer, built as it arrives, is
    // then never behind it (a small test model's graph is smaller than its tokenizer).
    const last = (file) => (file.name === manifest.graph ? 1 : 0);
    for (const file of [...listed].sort((a, b) => last(a) - last(b) || a.size - b.size)) {
      const chunks = file.chunks ?? [{ name: file.name, size: file.size, sha256: file.sha256 }];
      if (chunks.reduce((sum, chunk) => sum + chunk.size, 0) !== file.size) {
        throw new LoadError('truncated', `${file.name}: the manifest's chunks do not add up to ${file.size} bytes`);
      }
      // One place per file, filled chunk by chunk, so a large model is never held twice over.
      const whole = Promise.resolve().then(() => place(file, manifest));
      whole.catch(() => {}); // a failure is the load's once a chunk awaits it, below
      const offsets = chunks.map((_, i) => chunks.slice(0, i).reduce((sum, chunk) => sum + chunk.size, 0));
      await inParallel(chunks.map((chunk, i) => () => oneTabAtATime(store && chunk.sha256, waiting(chunk), async () => {
        const what = `part ${i + 1} of ${chunks.length} of the ${file.draft ? 'draft model' : 'model'}'s ${file.name} (${chunk.name})`;
        const url = new URL(chunk.name, modelUrl).href;
        const { bytes, fresh } = await loadChunk(store, url, chunk, what, onBytes);
        (await whole).set(bytes, offsets[i]);
        if (fresh && store) await store.keep(url, bytes); // last: it may take the bytes
      })), PARALLEL_CHUNKS);
      files[file.name] = await whole;
      // After the next file's first reads are under way, so the two overlap.
      finished.push(new Promise((next) => setTimeout(next, 0)).then(() => onFile(file.name, files[file.name])));
    }
    await Promise.all(finished);
    const urls = listed.flatMap((file) => (file.chunks ?? [file]).map((c) => new URL(c.name, modelUrl).href));
    if (store) await store.prune(urls);
  } finally {
    store?.close(); // the store worker, once every chunk is kept
  }
  return { manifest, files, kept: Boolean(store), keptApart: store instanceof FolderStore ? store.handedOver : 0 };
}

/**
 * `task`, run while holding the Web Lock named after a chunk's hash (`key`) where the browser has Web Locks: a second
 * tab loading the model at the same time (a reader opening two pages at once) waits for this tab's chunk, then reads it
 * from the store instead of downloading it again. Without a key (nowhere to keep the chunk), `task` just runs.
 * While another tab holds the lock, waiting(true) is called at once and then every WAITING_REPORT_MS, and
 * waiting(false) once the wait is over.
 */
async function oneTabAtATime(key, waiting, task) {
  if (!key || !globalThis.navigator?.locks) return task();
  const name = `onepass-chunk-${key}`;
  const held = Symbol('held by another tab');
  const first = await navigator.locks.request(name, { ifAvailable: true }, (lock) => (lock ? task() : held));
  if (first !== held) return first;
  waiting(true);
  const reporting = setInterval(() => waiting(true), WAITING_REPORT_MS);
  try {
    return await navigator.locks.request(name, () => {
      clearInterval(reporting);
      waiting(false);
      return task();
    });
  } finally {
    clearInterval(reporting); // had the wait failed
  }
}

/** Run the async `tasks`, at most `limit` at a time; rejects with the first failure. */
async function inParallel(tasks, limit) {
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) await tasks[next++]();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
}
