/**
 * The page's side of the worker: a Promise API over small, id-tagged messages.
 * The page never holds Python objects; it gets plain data (runs, passes, progress, errors).
 */

const CANCEL_GRACE_MS = 500;

export class RuntimeError extends Error {
  constructor({ code, message, retryable }) {
    super(message);
    this.code = code;
    this.retryable = retryable;
  }
}

export class Runtime {
  constructor() {
    this.worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.pending = new Map();
    this.nextId = 1;
    this.loaded = null;
    this.progress = null; // the last {loaded, total}, for panels that start listening mid-download
    this.listeners = new Set();
    this.watchers = new Set(); // progress listeners that stay across failed loads and retries (the model card)
    this.whenLoaded = new Promise((resolve) => { this.markLoaded = resolve; }); // whichever load succeeds
    // With cross-origin isolation the page can stop Python even inside a loop that never yields (a reader's proposer).
    this.interrupt = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    if (this.interrupt) this.request('interrupt', { buffer: this.interrupt.buffer });
    this.worker.onmessage = ({ data }) => this.receive(data);
    this.worker.onerror = (event) => {
      const error = new RuntimeError({ code: 'worker', message: `the worker failed: ${event.message ?? 'could not start'}`, retryable: false });
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
  }

  receive(message) {
    const request = this.pending.get(message.id);
    if (!request) return;
    if (message.type === 'done' || message.type === 'error') {
      this.pending.delete(message.id);
      if (message.type === 'done') request.resolve(message.result);
      else request.reject(new RuntimeError(message.error));
    } else {
      request.onEvent?.(message);
    }
  }

  request(type, payload = {}, onEvent = null) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent });
      this.worker.postMessage({ id, type, ...payload });
    });
  }

  /**
   * Load the model once per visit; onProgress(loaded, total) in bytes reaches every caller until the load
   * ends. `threads` overrides the worker's choice (the benchmark). A failed load may be retried.
   */
  load(onProgress = null, threads = undefined) {
    if (onProgress && !this.info) {
      this.listeners.add(onProgress);
      if (this.progress) onProgress(this.progress.loaded, this.progress.total);
    }
    this.loaded ??= this.request('load', { threads }, (m) => {
      if (m.type !== 'progress') return;
      this.progress = { loaded: m.loaded, total: m.total };
      for (const listener of [...this.listeners, ...this.watchers]) listener(m.loaded, m.total);
    }).then((info) => {
      this.info = info;
      this.progress = null;
      this.markLoaded(info);
      return info;
    }, (err) => {
      this.loaded = null;
      this.progress = null;
      throw err;
    }).finally(() => this.listeners.clear());
    return this.loaded;
  }

  /** Follow every download attempt's progress, without starting one; returns the way to stop following. */
  watch(onProgress) {
    this.watchers.add(onProgress);
    if (this.progress) onProgress(this.progress.loaded, this.progress.total);
    return () => this.watchers.delete(onProgress);
  }

  /**
   * Generate after `text` (mode: greedy | lookup | guess | random); onPass({pass, text}) per pass, where
   * text is the newly completed output. `guess` is the reader's continuation, `seed` the random draft's.
   */
  generate({ text, mode = 'greedy', kvCache = true, maxNew = 20, guess = '', seed = 0, proposer = '' }, onPass = null) {
    return this.request('generate', { text, mode, kvCache, maxNew, guess, seed, proposer }, (m) => m.type === 'pass' && onPass?.(m));
  }

  /** One pass checks `guess` after `text`: the pass record, the prompt's ids and labels. */
  verify(text, guess, kvCache = true) {
    return this.request('verify', { text, guess, kvCache });
  }

  /** One pass over `text`: its ids, the model's top-k after each, and every id's label. */
  predict(text) {
    return this.request('predict', { text });
  }

  /** Median ms of one pass over the first n tokens of `text`, for each n in `sizes`. */
  measure(text, sizes, runs) {
    return this.request('measure', { text, sizes, runs });
  }

  /** Start Python without the model; resolves to step 5's setup: {examples, default_proposer}. */
  python() {
    return this.request('python');
  }

  /** Step 6: speculative sampling of `draws` tokens with target p and draft q; counts and a chi-squared verdict. */
  sample(p, q, draws, seed) {
    return this.request('sample', { p, q, draws, seed });
  }

  cancel() {
    const answered = this.request('cancel');
    // The worker answers at once unless Python is stuck in a loop that never awaits (a reader's proposer):
    // only then is Python interrupted, so the interrupt lands in that loop and nowhere else.
    const stuck = setTimeout(() => { if (this.interrupt) this.interrupt[0] = 2; }, CANCEL_GRACE_MS);
    return answered.finally(() => clearTimeout(stuck));
  }

  tokenize(texts) {
    return this.request('tokenize', { texts });
  }

  decode(ids) {
    return this.request('decode', { ids });
  }

  exactness(ids) {
    return this.request('exactness', { ids });
  }

  bench(options) {
    return this.request('bench', options);
  }
}

let shared = null;

/** The one runtime of this page visit (instant navigation keeps it across pages). */
export function runtime() {
  shared ??= new Runtime();
  return shared;
}
