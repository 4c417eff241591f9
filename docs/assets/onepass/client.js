/**
 * The page's side of the worker: a Promise API over small, id-tagged messages.
 * The page never holds Python objects; it gets plain data (runs, passes, progress, errors).
 */

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
   * Load the model once per visit; onProgress(loaded, total) in bytes reaches the first caller (the page's
   * panel). `threads` overrides the worker's choice (the benchmark). A failed load may be retried.
   */
  load(onProgress = null, threads = undefined) {
    this.loaded ??= this.request('load', { threads }, (m) => m.type === 'progress' && onProgress?.(m.loaded, m.total))
      .catch((err) => {
        this.loaded = null;
        throw err;
      });
    return this.loaded;
  }

  /**
   * Generate after `text` (mode: greedy | lookup | guess | random); onPass({pass, text}) per pass, where
   * text is the newly completed output. `guess` is the reader's continuation, `seed` the random draft's.
   */
  generate({ text, mode = 'greedy', kvCache = true, maxNew = 20, guess = '', seed = 0 }, onPass = null) {
    return this.request('generate', { text, mode, kvCache, maxNew, guess, seed }, (m) => m.type === 'pass' && onPass?.(m));
  }

  cancel() {
    return this.request('cancel');
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
