/**
 * The page's side of the worker, and the runtime's one way in for the pages: a Promise API over small, id-tagged
 * messages. A request of the contract (py/onepass/contract.py, generated as contract.js) goes through `run(kind,
 * request)` untouched; the pages build it with `request(kind, fields)`, below. The page never holds Python
 * objects; it gets plain data (runs, passes, progress, errors: OnepassError, errors.js).
 */
import { CONTRACT } from './contract.js';
import { OnepassError } from './errors.js';

/** @import { LoadInfo, Requests, Results, RunEvent, WorkerReply } from './contract.js' */

export { OnepassError };
export { readManifest } from './loader.js'; // the site's manifest, read before the model loads (the model card)
export { median } from './harness.js'; // one median for the runtime's timings and the pages' figures
export const { timing: TIMING } = CONTRACT; // the parts of a pass's time, as "Under the hood" draws them

const CANCEL_GRACE_MS = 500; // then Python is interrupted
const CANCEL_DEADLINE_MS = 1500; // then the worker is replaced: Cancel ends any run within 2 s
const PING_MS = 2000;
// A worker that answers nothing for this long while a request waits, or a run that hears nothing of its own (a
// Pyodide that failed fatally answers pings but never the run), is replaced. A pass blocks the worker's event
// loop, and the longest one the limits allow (py/onepass/limits.py) takes about 40 s on the real model.
const SILENT_MS = 120_000;
// Requests that run Python or the model, which Cancel stops.
const RUNS = new Set([...Object.keys(CONTRACT.requests), 'bench', 'positionIndependence']);

/** What the contract lacks of a `kind` request of `fields` (the kind itself, or fields), in words; '' if nothing. */
function lacking(kind, fields) {
  const spec = CONTRACT.requests[kind];
  if (!spec) return `there is no ${kind} request: the contract has ${Object.keys(CONTRACT.requests).join(', ')}`;
  const unknown = Object.keys(fields).filter((name) => !(name in spec.fields));
  return unknown.length ? `the ${kind} request has no ${unknown.join(', ')}` : '';
}

/**
 * The one way a page builds a request of the contract: `fields` with the contract's defaults for those left out,
 * so equal requests are equal (the result cache's key). A field the contract lacks throws.
 * @template {keyof Requests} K
 * @param {K} kind
 * @param {Partial<Requests[K]>} fields
 * @returns {Requests[K]}
 */
export function request(kind, fields = {}) {
  const lacks = lacking(kind, fields);
  if (lacks) throw new OnepassError('error', lacks);
  const defaults = Object.entries(CONTRACT.requests[kind].fields).filter(([, value]) => value !== null);
  const given = Object.entries(fields).filter(([, value]) => value !== undefined);
  return /** @type {Requests[K]} */ (Object.fromEntries([...defaults, ...given]));
}

export class Runtime {
  constructor() {
    this.pending = new Map();
    this.nextId = 1;
    /** @type {Promise<LoadInfo> | null} */
    this.loaded = null;
    /** @type {LoadInfo | null} what the loaded model is (null until it is) */
    this.info = null;
    this.progress = null; // the last {loaded, total, elsewhere}, for panels that start listening mid-download
    this.listeners = new Set();
    this.watchers = new Set(); // progress listeners that stay across failed loads, retries and restarts (the model card)
    /** @type {Promise<LoadInfo>} */
    this.whenLoaded = new Promise((resolve) => { this.markLoaded = resolve; }); // whichever load succeeds
    // With cross-origin isolation the page can stop Python even inside a loop that never yields (a reader's proposer).
    this.interrupt = self.crossOriginIsolated ? new Int32Array(new SharedArrayBuffer(4)) : null;
    this.silentMs = SILENT_MS; // the tests shorten it
    this.restarts = 0; // workers replaced so far, for the tests and the console
    this.stopping = null; // while cancelled runs end: the next run waits for it (request)
    this.worker = null;
    this.start();
  }

  /** A new worker, watched three ways: its error event, the Web Lock it holds until it ends, and its silence. */
  start() {
    const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    this.worker = worker;
    this.heard = performance.now();
    this.spoke = false;
    // The worker's clock less the page's, in ms, from the ping answered soonest (`clockError`: half its round trip,
    // the most the estimate can be off): Chromium sets each global's timeOrigin from the system clock
    // (w3c/hr-time#115), so the two can be a few ms apart, and a pass's `sent` is read on the worker's.
    this.clockOffset = 0;
    this.clockError = Infinity;
    this.pings = []; // when each unanswered ping was posted, on the page's clock (the worker answers them in order)
    const current = () => worker === this.worker; // a replaced worker's last words are ignored
    worker.onmessage = ({ data }) => {
      if (!current()) return;
      this.heard = performance.now();
      this.spoke = true;
      this.receive(data);
    };
    // Handled here (a restart, its reason in the console), so not reported again as the page's uncaught error; a
    // replaced worker's last error (Pyodide rethrows what failed it for good) is handled by ignoring it.
    worker.onerror = (event) => {
      event.preventDefault();
      if (current()) this.restart(`the model's worker failed: ${event.message ?? 'it could not start'}`);
    };
    this.ping(); // a first comparison of the clocks (rough: the worker is still starting; each run's ping refines it)
    if (this.interrupt) {
      this.interrupt[0] = 0;
      this.request('interrupt', { buffer: this.interrupt.buffer }).catch(() => {}); // a worker that dies first is restarted
    }
    if (navigator.locks) {
      const lock = `onepass-worker-${crypto.randomUUID()}`;
      // The page is granted the lock only once the worker holding it has ended, however it ended.
      this.request('hold', { lock }).then(() => navigator.locks.request(lock, () => {
        if (current()) this.restart('the model\'s worker stopped');
      }), () => {});
    }
  }

  /**
   * End the worker: every waiting request is rejected with `error` (by default: the worker stopped, try again).
   * The next request starts a new worker, and the next load() loads the model into it, from the browser's cache.
   * Starting lazily means a worker that cannot start at all is not restarted in a loop.
   */
  restart(reason, error = null) {
    this.worker.terminate();
    this.worker = null;
    this.restarts += 1;
    console.warn(`onepass: ${reason}; the next request starts a new worker`);
    const failure = error ?? (this.spoke
      ? new OnepassError('worker_restarted', 'the model stopped responding in this tab and was restarted: run again (it reloads from this browser\'s cache first)', { retryable: true, detail: reason })
      : new OnepassError('worker', 'the model\'s runtime could not start in this tab: reload the page', { retryable: true, detail: reason }));
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.loaded = null;
    this.info = null;
    this.progress = null;
    for (const { reject } of waiting) reject(failure);
  }

  /** Ask the worker for a sign of life and its clock (a pong). */
  ping() {
    this.pings.push(performance.timeOrigin + performance.now());
    this.worker.postMessage({ type: 'ping' });
  }

  /** While requests wait, ping the worker; one silent for `silentMs` (hung, or closed by a proposer) is replaced. */
  keepAlive() {
    if (this.pinging || !this.pending.size) return;
    this.pinging = setInterval(() => {
      const quiet = (since) => performance.now() - since > this.silentMs;
      if (!this.pending.size) {
        clearInterval(this.pinging);
        this.pinging = null;
      } else if (quiet(this.heard) || [...this.pending.values()].some((r) => RUNS.has(r.type) && quiet(r.heard))) {
        this.restart(`no answer for ${Math.round(this.silentMs / 1000)} s`);
      } else {
        this.ping();
      }
    }, Math.min(PING_MS, this.silentMs / 2));
  }

  /** @param {WorkerReply} message */
  receive(message) {
    if (message.type === 'pong') return this.compareClocks(message.clock); // a sign of life, heard already (start)
    if (message.type === 'fatal') {
      // Python failed for good in the worker (worker.js says why): the worker is replaced. A stack overflow, the
      // reader's own code's doing, is said as such; anything else as any restart.
      const { code, detail } = message.error;
      return this.restart(`Python failed for good: ${detail ?? code}`, code === 'stack'
        ? OnepassError.from({ ...message.error, code: 'worker_restarted', retryable: true }) : null);
    }
    // A run waiting for the model to download is not silent while the download goes on.
    if (message.type === 'progress') for (const waiting of this.pending.values()) waiting.heard = performance.now();
    const request = this.pending.get(message.id);
    if (!request) return;
    request.heard = performance.now();
    if (message.type === 'done' || message.type === 'error') {
      this.pending.delete(message.id);
      if (message.type === 'done') request.resolve(message.result);
      else request.reject(OnepassError.from(message.error));
    } else {
      // A pass's moment sent, on the page's clock, as its listeners compare it with their own readings.
      if (message.type === 'pass') message.sent -= this.clockOffset;
      request.onEvent?.(message);
    }
  }

  /** A pong's `clock` against the page's: the offset is taken from the ping with the shortest round trip. */
  compareClocks(clock) {
    const posted = this.pings.shift();
    if (posted === undefined) return;
    const answered = performance.timeOrigin + performance.now();
    const error = (answered - posted) / 2;
    if (error >= this.clockError) return;
    this.clockError = error;
    this.clockOffset = clock - (posted + answered) / 2;
  }

  /**
   * @param {string} type
   * @param {Object} [payload]
   * @param {((event: RunEvent) => void) | null} [onEvent]
   * @returns {Promise<*>}
   */
  request(type, payload = {}, onEvent = null) {
    // The worker runs one run at a time: a run asked for while cancelled ones end (within 2 s) waits for them, rather
    // than being refused as busy (the reader pressed Run on the page they navigated to).
    if (this.stopping && RUNS.has(type)) return this.stopping.then(() => this.request(type, payload, onEvent));
    const id = this.nextId++;
    const waiting = { type, onEvent, heard: performance.now() };
    const answer = new Promise((resolve, reject) => {
      Object.assign(waiting, { resolve, reject });
      if (!this.worker) this.start();
      if (!this.pending.size) this.heard = performance.now(); // silence is counted from the first request waiting
      this.pending.set(id, waiting);
      if (RUNS.has(type)) this.ping(); // answered before the run starts: the clocks compared again, while it is idle
      this.worker.postMessage({ id, type, ...payload });
      this.keepAlive();
    });
    waiting.ended = answer.catch(() => {});
    return answer;
  }

  /** Whether a run (a request that Cancel stops) is under way or waiting. */
  running() {
    return [...this.pending.values()].some((request) => RUNS.has(request.type));
  }

  /**
   * Load the model once per visit; onProgress(loaded, total, elsewhere) in bytes reaches every caller until
   * the load ends (`elsewhere`: another tab is downloading what this one waits for, loader.js). `threads`
   * overrides the worker's choice (the benchmark). A failed load may be retried, in a new worker (the failed one
   * is ended), and after a restart the next call loads the model into the new worker.
   * @param {((loaded: number, total: number, elsewhere: boolean) => void) | null} [onProgress]
   * @param {number} [threads]
   * @returns {Promise<LoadInfo>}
   */
  load(onProgress = null, threads = undefined) {
    if (onProgress && !this.info) {
      this.listeners.add(onProgress);
      this.catchUp(onProgress);
    }
    this.loaded ??= this.request('load', { threads }, (m) => {
      if (m.type !== 'progress') return;
      this.progress = { loaded: m.loaded, total: m.total, elsewhere: Boolean(m.elsewhere) };
      for (const listener of [...this.listeners, ...this.watchers]) listener(m.loaded, m.total, this.progress.elsewhere);
    }).then((info) => {
      this.info = info;
      this.progress = null;
      this.markLoaded(info);
      return info;
    }, (err) => {
      this.loaded = null;
      this.progress = null;
      // The retry starts in a new worker: a runtime whose start failed part way (a WebAssembly module's download,
      // say) may never answer again in the old one. The new one starts Python again, a second or so.
      if (this.worker && err.code !== 'worker_restarted' && err.code !== 'worker') this.restart('the model did not load', err);
      throw err;
    }).finally(() => this.listeners.clear());
    return this.loaded;
  }

  /** Follow every download attempt's progress, without starting one; returns the way to stop following. */
  watch(onProgress) {
    this.watchers.add(onProgress);
    this.catchUp(onProgress);
    return () => this.watchers.delete(onProgress);
  }

  /** Tell `onProgress` how far the download under way has got, if one is. */
  catchUp(onProgress) {
    if (this.progress) onProgress(this.progress.loaded, this.progress.total, this.progress.elsewhere);
  }

  /**
   * A request of the contract's `kind` (generate, verify, predict, measure, sample, sampleNext), passed to the worker
   * untouched; its result (contract.js's types). onEvent gets {type: 'started', tokens} once Python has accepted it,
   * then, for generate, {type: 'pass', pass, text, labels, sent} per pass (text: the output the pass completed; sent: on the page's clock).
   * A field the contract lacks is refused here, before anything runs.
   * @template {keyof Results} K
   * @param {K} kind
   * @param {Requests[K]} fields
   * @param {((event: RunEvent) => void) | null} [onEvent]
   * @returns {Promise<Results[K]>}
   */
  run(kind, fields, onEvent = null) {
    const lacks = lacking(kind, fields);
    if (lacks) return Promise.reject(new OnepassError('error', lacks));
    return this.request(kind, { request: fields }, onEvent);
  }

  /** Start Python without the model (step 6's preset draws need no model); resolves to {python: its version}. */
  python() {
    return this.request('python');
  }

  /**
   * Stop the running request within 2 s. The worker answers at once unless Python is stuck in a loop that never
   * awaits (a reader's proposer): only then is Python interrupted, so the interrupt lands in that loop and nowhere
   * else. A run still going after that (a pass, a sleeping proposer, a closed worker) ends with its worker.
   */
  cancel() {
    const runs = [...this.pending.values()].filter((request) => RUNS.has(request.type));
    const stopping = Promise.all(runs.map((request) => request.ended)).then(() => {
      if (this.stopping === stopping) this.stopping = null;
    });
    this.stopping = stopping;
    const answered = this.request('cancel');
    const stuck = setTimeout(() => { if (this.interrupt) this.interrupt[0] = 2; }, CANCEL_GRACE_MS);
    const deadline = setTimeout(() => {
      if (runs.some((request) => [...this.pending.values()].includes(request))) {
        this.restart('a cancelled run did not stop', new OnepassError('cancelled', 'the run was cancelled', { retryable: true }));
      }
    }, CANCEL_DEADLINE_MS);
    return answered.then((answer) => answer, () => ({ cancelling: true })).finally(() => {
      clearTimeout(stuck);
      if (!runs.length) clearTimeout(deadline);
    });
  }

  /**
   * @param {string[]} texts
   * @returns {Promise<number[][]>} each text's ids
   */
  tokenize(texts) {
    return this.request('tokenize', { texts });
  }

  decode(ids) {
    return this.request('decode', { ids });
  }

  positionIndependence(ids, cases) {
    return this.request('positionIndependence', { ids, cases });
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

/**
 * The reader left the page whose runs are under way (instant navigation shows another): they are cancelled, as its
 * Cancel would, since no Cancel on the next page reaches them and the worker runs one run at a time. The model's
 * download goes on. Nothing is started on a visit that has no runtime yet.
 */
export function leavePage() {
  if (shared?.running()) shared.cancel();
}
