/**
 * The one worker the page talks to: it owns Pyodide and the tokenizer, and starts the model's own worker
 * (model-worker.js: the model's files, the ONNX session, every pass), which Python reaches through a
 * RemoteBridge (bridge.js). The two start side by side: Pyodide here (from the build's snapshot of Python where it
 * can: startPyodide), the session there.
 *
 * A panel's request is one of the contract's kinds (py/onepass/contract.py, here as contract.js: generate, verify,
 * predict, measure, sample, sampleNext, sampleRuns) and is answered in Python, py/onepass/entry.py's `run`: this hands it the
 * request untouched (as JSON), the model and the tokenizer, posts its pass events and returns its result, unchanged
 * (measure's passes are timed in the model's worker, at Python's asking: the bridge's `measure`).
 *
 * Messages in:  {id, type: KIND, request} (KIND one of the contract's, `request` its fields)
 *               | {id, type: 'load', threads?} | {type: 'ping'} (answered with {type: 'pong', clock} whenever the worker is free)
 *               | {id, type: 'hold', lock} (hold a Web Lock for the worker's life: the page hears of its end)
 *               | {id, type: 'cancel'} | {id, type: 'tokenize', texts} | {id, type: 'decode', ids}
 *               | {id, type: 'bench', ids, past?, verify?, prefill?, runs?} (benchmarks/bench_browser.py)
 *               | {id, type: 'positionIndependence', ids, cases} (harness.js's check of model_export/check.py's cases, for the tests)
 *               | {id, type: 'python'} (start Python alone: no model)
 *               | {id, type: 'interrupt', buffer} (a SharedArrayBuffer the page writes 2 into to stop Python)
 * Messages out: {id, type: 'progress', loaded, total, elsewhere} | {id, type: 'started', tokens} (a run's first pass begins)
 *               | {id, type: 'pass', pass, text, labels, sent} | {id, type: 'done', result}
 *               | {id, type: 'error', error: {code, message, retryable, detail?}} (an OnepassError, errors.js) | {type: 'pong', clock}
 *               | {type: 'fatal', error} (Python failed for good: the page replaces this worker)
 * One run of the model at a time; a second one is refused (code 'busy'), never interleaved. Every request is
 * checked against Python's limits (py/onepass/limits.py) before its first pass, a text by its length first. An error's message is plain
 * words for the reader; the raw text (a Python traceback, onnxruntime's own words) is its `detail`, and the console's.
 * A generated pass carries `timing` (seconds: model, kv, bridge, python) and its message `sent`, the moment it was
 * posted, in ms on this worker's clock (performance.timeOrigin + performance.now()). Chromium sets each global's
 * origin from the system clock, so the page's clock and this one can be a few ms apart (w3c/hr-time#115): a pong
 * carries this clock too, and the page (client.js) measures the difference and reads `sent` on its own clock.
 */
/** @import { LoadInfo, ModelLoaded, ModelReply, PassEvent, WorkerReply } from './contract.js' */
import { Tokenizer } from '../../../vendor/tokenizers/tokenizers.min.mjs';
import { loadPyodide } from '../../../vendor/pyodide/pyodide.mjs';

import { RemoteBridge, reply, WorkerChannel } from './bridge.js';
import { CONTRACT } from './contract.js';
import { ByteDecoder } from './decoder.js';
import { OnepassError } from './errors.js';

const VENDOR = new URL('../../../vendor/', import.meta.url);

let loading = null; // the promise of the loaded runtime, kept for the visit
let vendoredList = null; // site/vendor/runtime.json, read once
let python = null; // Pyodide's start, kept apart: it runs beside the model's download (a failed load ends this worker)
let busy = false;
let interrupt = null; // Pyodide's interrupt buffer, shared with the page when it is cross-origin isolated

/** @param {WorkerReply} message */
const post = (message) => self.postMessage(message);

/** The build's snapshot of Python (hooks/python_snapshot.py), ungzipped. */
async function snapshot(runtime) {
  const response = await fetch(new URL(runtime.snapshot.name, VENDOR));
  if (!response.ok) throw new Error(`Python's snapshot is missing (${response.status})`);
  const raw = response.body.pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(raw).arrayBuffer());
}

/**
 * Pyodide from the build's snapshot (about 0.3 s), or started plainly (about 1.3 s). The snapshot was made in
 * Chromium and holds what Pyodide found there, so it is used only where this browser has WebAssembly stack
 * switching exactly as that one had. It only saves time: if it cannot be read or restored, Python starts plainly
 * and the console says why.
 */
async function startPyodide(runtime) {
  const options = { indexURL: VENDOR.href + 'pyodide/', packageBaseUrl: VENDOR.href + 'pyodide/' };
  if (runtime.snapshot && runtime.snapshot.jspi === ('Suspending' in WebAssembly)) {
    try {
      return { pyodide: await loadPyodide({ ...options, _loadSnapshot: snapshot(runtime) }), snapshot: true };
    } catch (err) {
      console.warn("onepass: Python's snapshot could not be used, starting Python plainly:", err);
    }
  }
  return { pyodide: await loadPyodide(options), snapshot: false };
}

async function startPython(runtime) {
  const began = performance.now();
  const { pyodide, snapshot: fromSnapshot } = await startPyodide(runtime);
  // A Pyodide that failed for good (the JavaScript stack overflowed inside Python: a reader's proposer that raised
  // Python's recursion limit and recursed) runs nothing again, and the request it ran is never answered. The page is
  // told at once and replaces this worker, where it would otherwise wait out the worker's silence (client.js).
  pyodide._api.on_fatal = (err) => {
    post({ type: 'fatal', error: describe(err) });
    // Pyodide then rethrows `err`, uncaught, and the run that was under way fails on the broken Python. Both are this
    // failure, said just now: they are not reported again as this worker's uncaught errors.
    const said = (event) => event.preventDefault();
    self.addEventListener('error', said);
    self.addEventListener('unhandledrejection', said);
  };
  // The wheel's files: the snapshot holds the modules it imported, not the files the rest may import.
  const wheel = await fetch(new URL(runtime.wheel, VENDOR));
  if (!wheel.ok) throw new Error(`the onepass wheel is missing (${wheel.status})`);
  pyodide.unpackArchive(await wheel.arrayBuffer(), 'wheel');
  return { pyodide, seconds: (performance.now() - began) / 1000, fromSnapshot };
}

/** site/vendor/runtime.json (versions, the wheel's name), read once per visit. */
function vendored() {
  vendoredList ??= fetch(new URL('runtime.json', VENDOR)).then((response) => response.json()).catch((err) => {
    vendoredList = null;
    throw err;
  });
  return vendoredList;
}

/** Python with the onepass package, started once; the model is not needed for it (step 6's sampling). */
function ensurePython() {
  python ??= vendored()
    .then(startPython)
    .then((started) => {
      if (interrupt) started.pyodide.setInterruptBuffer(interrupt);
      return started;
    })
    .catch((err) => {
      python = null;
      throw err;
    });
  return python;
}

async function load(id, threads) {
  // Each phase in seconds from the request, for the benchmark and "Under the hood": where a start's time goes.
  const timings = {};
  const began = performance.now();
  const since = () => (performance.now() - began) / 1000;
  const runtime = await vendored();
  // Pyodide starts here while the model's worker reads the model's bytes and makes the session.
  ensurePython().catch(() => {}); // if the download fails first, Pyodide's own failure is reported on the retry
  let text = null; // the tokenizer, built while the weights still arrive (it arrives first: it is smaller)
  /** @param {ModelReply} event */
  const onEvent = (event) => {
    if (event.type === 'progress') {
      const { loaded, total, elsewhere } = event;
      return post({ id, type: 'progress', loaded, total, elsewhere });
    }
    if (event.type !== 'file') return;
    const tokenizerBegan = performance.now();
    const json = JSON.parse(new TextDecoder().decode(event.bytes));
    text = { tokenizer: new Tokenizer(json, {}), decoder: new ByteDecoder(json) };
    timings.tokenizer = (performance.now() - tokenizerBegan) / 1000;
  };
  const channel = new WorkerChannel(new Worker(new URL('./model-worker.js', import.meta.url), { type: 'module' }));
  try {
    /** @type {ModelLoaded} */
    const model = await channel.request('load', { threads }, onEvent);
    return await ready(model, channel, text, runtime, timings, since);
  } catch (err) {
    channel.worker.terminate(); // a retry starts a new one: the model's memory must not be held twice
    throw err;
  }
}

/** The loaded runtime, once the model's worker has the session: Python, the tokenizer and the bridge joined. */
async function ready(model, channel, text, runtime, timings, since) {
  // If the model's worker dies later, its waiting requests fail and the next request loads it again.
  channel.onFail = () => {
    loading = null;
  };
  Object.assign(timings, model.timings);
  if (!text) throw new OnepassError('not_found', "the model's manifest lists no tokenizer.json", { retryable: true });
  const { tokenizer, decoder } = text;

  const waited = performance.now();
  const { pyodide, seconds, fromSnapshot } = await ensurePython();
  timings.pyodide = seconds;
  timings.pyodideWait = (performance.now() - waited) / 1000;
  const bridge = new RemoteBridge(channel);
  const browser = pyodide.pyimport('onepass.backends.browser');
  const entry = pyodide.pyimport('onepass.entry');
  // The bridge and the tokenizer go to Python as plain JS objects: the algorithms never import `js` or a JS module.
  // Beside the passes, step 3's: passes timed one after another in the model's worker, with no Python between them.
  const measure = (ids, sizes, runs, warmup) => channel.request('measure', { ids: ids.toJs(), sizes: sizes.toJs(), runs, warmup });
  const backend = browser.BrowserModel({ ...bridge.module(), measure }, JSON.stringify(model.manifest),
    model.draftAnswers ?? '', model.threads);
  const pyTokenizer = browser.BrowserTokenizer({
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }).ids,
    decode: (ids) => decoder.decode(ids.toJs()),
    pieces: (ids) => ids.toJs().map((id) => decoder.decode([id])), // a pass's labels, in one crossing
  }, backend.clock);
  const limits = JSON.parse(entry.limits());
  timings.total = since();
  /** @type {LoadInfo} */
  const info = {
    model: model.manifest.model.name,
    identity: model.manifest.identity,
    bytes: model.manifest.files.reduce((sum, f) => sum + f.size, 0),
    quantisation: model.manifest.quantisation.name,
    threads: model.threads,
    crossOriginIsolated: self.crossOriginIsolated,
    pythonSnapshot: fromSnapshot,
    modelFromHeap: model.modelFromHeap, // the model's bytes went straight into ort's heap (ort-module.js)
    chunksKeptApart: model.chunksKeptApart, // downloaded chunks written on the store worker's thread (store-worker.js)
    modelKept: model.modelKept, // every chunk is in this browser's store, for the next visit (loader.js)
    // The draft model the site ships (its draft.json, from the manifest), or null and why, if the build said.
    draft: model.draft ? model.manifest.draft : null,
    draftUnavailable: model.manifest.draft_unavailable ?? null,
    versions: { ...runtime.versions, pyodideRuntime: pyodide.version, ort: model.ort },
    limits,
    timings,
  };
  return { pyodide, browser, entry, backend, channel, bridge, tokenizer, decoder, pyTokenizer, limits, info };
}

function ensureLoaded(id, threads) {
  loading ??= load(id, threads).catch((err) => {
    loading = null; // a failed load may be retried
    throw err;
  });
  return loading;
}

/** Python's JSON result, or its refusal (contract.Refusal: a limit, the reader's proposer) thrown with its code. */
function fromPython(json) {
  const result = JSON.parse(json);
  if (result.error) throw new OnepassError(result.error.code, result.error.message, { retryable: true });
  return result;
}

/**
 * A request of the contract's `kind`, answered in Python (py/onepass/entry.py's `run`), the request as the page sent
 * it: with the model and the tokenizer when the kind needs them (else Python alone), each pass's event posted as it
 * comes, and 'started' once Python has accepted the request (the page's clock starts then).
 */
async function inPython(id, kind, request) {
  const { kind: name, model } = CONTRACT.requests[kind];
  const rt = model ? await ensureLoaded(id) : null;
  const entry = rt?.entry ?? (await ensurePython()).pyodide.pyimport('onepass.entry');
  const onPass = (json) => {
    /** @type {PassEvent} */
    const event = JSON.parse(json);
    post({ id, type: 'pass', ...event, sent: performance.timeOrigin + performance.now() });
  };
  const started = (tokens) => post({ id, type: 'started', tokens });
  if (rt) rt.bridge.cancelled = false;
  try {
    return fromPython(await entry.run(name, JSON.stringify(request), rt?.backend, rt?.pyTokenizer, onPass, started));
  } finally {
    rt?.bridge.closeAll();
  }
}

/** The harness's pass times (ms, in JS), and the Python bridge's cost per pass. */
async function bench(rt, { ids, past = 32, verify = 6, prefill = 30, runs = 10, warmup = 3 }) {
  rt.bridge.cancelled = false;
  const options = { past, verify, prefill, runs, warmup };
  const figures = { threads: rt.info.threads, ...(await rt.channel.request('passTimes', { ids, options })) };
  figures.bridge_ms = 1000 * (await rt.browser.bridge_overhead(rt.backend, ids.slice(0, past + 1), past, runs));
  return figures;
}

/** Runs `task` unless another generation or benchmark is running, which is refused rather than interleaved. */
async function exclusive(task) {
  if (busy) throw new OnepassError('busy', 'a run is already in progress: wait for it to finish or cancel it');
  busy = true;
  if (interrupt) interrupt[0] = 0; // a stop meant for an earlier run must not stop this one
  try {
    return await task();
  } finally {
    busy = false;
  }
}

const HANDLERS = {
  // The contract's requests: one that needs the model takes the worker, one that does not (step 6's presets) runs
  // whenever asked (a stop meant for a run must not stop it).
  ...Object.fromEntries(Object.entries(CONTRACT.requests).map(([kind, { model }]) => [kind, (id, { request }) => {
    if (model) return exclusive(() => inPython(id, kind, request));
    if (interrupt && !busy) interrupt[0] = 0;
    return inPython(id, kind, request);
  }])),
  load: async (id, message) => (await ensureLoaded(id, message.threads)).info,
  tokenize: async (id, { texts }) => {
    const rt = await ensureLoaded(id);
    return texts.map((text) => rt.tokenizer.encode(text, { add_special_tokens: false }).ids);
  },
  decode: async (id, { ids }) => {
    const rt = await ensureLoaded(id);
    // Streamed as a run streams its text, by Python's Stream (py/onepass/tokens.py).
    return fromPython(rt.entry.pieces(rt.pyTokenizer, ids));
  },
  python: async () => ({ python: (await ensurePython()).pyodide.version }),
  hold: async (id, { lock }) => {
    // The lock is released only when this worker ends, however it ends (self.close() fires no error event).
    await /** @type {Promise<void>} */ (new Promise((held) => navigator.locks.request(lock, () => {
      held();
      return new Promise(() => {});
    })));
    return { held: lock };
  },
  interrupt: async (id, { buffer }) => {
    interrupt = new Int32Array(buffer);
    if (python) (await python).pyodide.setInterruptBuffer(interrupt);
    return { interruptible: true };
  },
  bench: (id, message) => exclusive(async () => {
    const rt = await ensureLoaded(id);
    try {
      return await bench(rt, message);
    } finally {
      rt.bridge.closeAll();
    }
  }),
  positionIndependence: (id, { ids, cases }) => exclusive(async () => {
    const rt = await ensureLoaded(id);
    rt.bridge.cancelled = false;
    return rt.channel.request('positionIndependence', { ids, cases });
  }),
  cancel: async () => {
    const rt = loading && (await loading);
    if (rt && busy) rt.bridge.cancelled = true;
    return { cancelling: busy };
  },
};

// Errors raised with a code on purpose (a refused input, a failed download, a busy worker) already say what went
// wrong in words for the reader. Anything else is raw runtime text: it is matched here to a plain message.
const RAW = [
  // The page's Cancel, as it surfaces from the bridge ('cancelled') or from Python's interrupt buffer.
  { test: /\bcancelled\b|KeyboardInterrupt/, code: 'cancelled', message: 'the run was cancelled' },
  {
    test: /bad_alloc|out of memory|Out of memory|allocation failed|MemoryError/,
    code: 'memory',
    message: 'this tab ran out of memory for that pass: try a shorter text, or close other tabs, and run again',
  },
  {
    test: /Maximum call stack size exceeded|too much recursion/,
    code: 'stack',
    message: 'Python ran out of stack in this tab (code that recursed too deep): run again',
  },
  { test: /OrtRun|onnxruntime|ERROR_CODE/, code: 'model', message: 'the model could not run that pass in this tab: run again, or reload the page' },
  { test: /Traceback|PythonError|pyodide/i, code: 'python', message: 'Python stopped with an error in this tab: run again, or reload the page' },
];

function describe(err) {
  if (err?.code) return { code: err.code, message: String(err.message), retryable: err.retryable ?? false };
  const detail = String(err?.message ?? err);
  const known = RAW.find(({ test }) => test.test(detail));
  const { code, message } = known ?? { code: 'error', message: 'something went wrong in this tab: run again, or reload the page' };
  if (code !== 'cancelled') console.error('onepass worker:', detail);
  return { code, message, retryable: true, detail };
}

self.onmessage = ({ data }) => {
  // The page's sign of life: answered whenever this worker's event loop is free (a pass or a proposer blocks it).
  if (data.type === 'ping') return post({ type: 'pong', clock: performance.timeOrigin + performance.now() });
  const handler = HANDLERS[data.type] ?? (() => {
    throw new OnepassError('error', `unknown request ${data.type}`);
  });
  return reply(data.id, () => handler(data.id, data), { describe });
};
