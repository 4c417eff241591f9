/**
 * The one worker that owns Pyodide, the tokenizer and the ONNX session.
 *
 * Messages in:  {id, type: 'load', threads?} | {id, type: 'generate', text, mode, kvCache, maxNew, guess?, seed?}
 *               | {id, type: 'cancel'} | {id, type: 'tokenize', texts} | {id, type: 'decode', ids}
 *               | {id, type: 'bench', ids, past?, verify?, prefill?, runs?} (benchmarks/bench_browser.py)
 *               | {id, type: 'exactness', ids} (the position-independence check, for the tests)
 * Messages out: {id, type: 'progress', loaded, total} | {id, type: 'pass', pass, text}
 *               | {id, type: 'done', result} | {id, type: 'error', error: {code, message, retryable}}
 * One generation runs at a time; a second one is refused (code 'busy'), never interleaved.
 */
import { Tokenizer } from '../../vendor/tokenizers/tokenizers.min.mjs';
import * as ort from '../../vendor/ort/ort.wasm.min.mjs';
import { loadPyodide } from '../../vendor/pyodide/pyodide.mjs';

import { OnnxBridge } from './bridge.js';
import { ByteDecoder } from './decoder.js';
import { positionIndependence } from './exactness.js';
import { loadModel } from './loader.js';

const SITE = new URL('../../', import.meta.url);
const VENDOR = new URL('vendor/', SITE);
const MAX_THREADS = 4; // a 0.5B model gains little past four threads, and the page must stay responsive

let loading = null; // the promise of the loaded runtime, kept for the visit
let python = null; // Pyodide's start, kept apart so a retried model download does not start it twice
let busy = false;

const post = (message) => self.postMessage(message);

function threadCount(requested) {
  // WASM threads need SharedArrayBuffer, which only a cross-origin isolated page has.
  if (!self.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(requested ?? navigator.hardwareConcurrency ?? 1, MAX_THREADS));
}

async function startPython(runtime) {
  const began = performance.now();
  const pyodide = await loadPyodide({ indexURL: VENDOR.href + 'pyodide/', packageBaseUrl: VENDOR.href + 'pyodide/' });
  const wheel = await fetch(new URL(runtime.wheel, VENDOR));
  if (!wheel.ok) throw new Error(`the onepass wheel is missing (${wheel.status})`);
  pyodide.unpackArchive(await wheel.arrayBuffer(), 'wheel');
  return { pyodide, seconds: (performance.now() - began) / 1000 };
}

async function load(id, threads) {
  const timings = {};
  const began = performance.now();
  const runtime = await (await fetch(new URL('runtime.json', VENDOR))).json();
  // Pyodide starts while the model downloads.
  python ??= startPython(runtime).catch((err) => {
    python = null;
    throw err;
  });
  python.catch(() => {}); // if the download fails first, Pyodide's own failure is reported on the retry
  const model = await loadModel(new URL('model/', SITE), (loaded, total) => post({ id, type: 'progress', loaded, total }));
  timings.model_bytes = (performance.now() - began) / 1000;

  ort.env.wasm.wasmPaths = VENDOR.href + 'ort/';
  ort.env.wasm.numThreads = threadCount(threads);
  const sessionBegan = performance.now();
  const onnx = await ort.InferenceSession.create(model.files['model.onnx'], { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
  timings.onnx_session = (performance.now() - sessionBegan) / 1000;

  const tokenizerJson = JSON.parse(new TextDecoder().decode(model.files['tokenizer.json']));
  const tokenizer = new Tokenizer(tokenizerJson, {});
  const decoder = new ByteDecoder(tokenizerJson);

  const { pyodide, seconds } = await python;
  timings.pyodide = seconds;
  const bridge = new OnnxBridge(ort, onnx, model.manifest);
  const browser = pyodide.pyimport('onepass.backends.browser');
  // The bridge goes to Python as a plain JS object: the algorithms never import `js` or a JS module.
  const backend = browser.BrowserModel(bridge.module(), JSON.stringify(model.manifest));
  timings.total = (performance.now() - began) / 1000;
  const info = {
    model: model.manifest.model.name,
    bytes: model.manifest.files.reduce((sum, f) => sum + f.size, 0),
    quantisation: model.manifest.quantisation.name,
    threads: ort.env.wasm.numThreads,
    crossOriginIsolated: self.crossOriginIsolated,
    versions: { ...runtime.versions, pyodideRuntime: pyodide.version, ort: ort.env.versions.web },
    timings,
  };
  return { browser, backend, bridge, tokenizer, decoder, info };
}

function ensureLoaded(id, threads) {
  loading ??= load(id, threads).catch((err) => {
    loading = null; // a failed load may be retried
    throw err;
  });
  return loading;
}

async function generate(id, { text, mode, kvCache, maxNew, guess = '', seed = 0 }) {
  const rt = await ensureLoaded(id);
  const encode = (s) => rt.tokenizer.encode(s, { add_special_tokens: false }).ids;
  const prompt = encode(text);
  const stream = rt.decoder.stream();
  rt.bridge.cancelled = false;
  const onPass = (json) => {
    const pass = JSON.parse(json);
    post({ id, type: 'pass', pass, text: stream.push(pass.added) });
  };
  try {
    const run = JSON.parse(await rt.browser.generate(rt.backend, prompt, mode, Boolean(kvCache), maxNew, onPass, encode(guess), seed));
    return { ...run, text: rt.decoder.decode(run.tokens), promptText: text };
  } finally {
    rt.bridge.closeAll();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median ms of `pass()` after warm-up; `reset()` runs untimed after each pass (e.g. a rollback). */
async function timePasses(pass, reset, runs, warmup) {
  const times = [];
  for (let i = 0; i < warmup + runs; i++) {
    const began = performance.now();
    await pass();
    if (i >= warmup) times.push(performance.now() - began);
    reset();
  }
  return median(times);
}

/** Decode-1 and verify-6 after a past, prefill from empty (ms, in JS), and the Python bridge's cost per pass. */
async function bench(rt, { ids, past = 32, verify = 6, prefill = 30, runs = 10, warmup = 3 }) {
  const b = rt.bridge;
  b.cancelled = false;
  const session = b.open(true);
  await b.run(session, ids.slice(0, past), 0, false);
  const step = (n) => timePasses(() => b.run(session, ids.slice(past, past + n), past, false), () => b.rollback(session, past), runs, warmup);
  const figures = { threads: ort.env.wasm.numThreads, past, runs };
  figures.decode_1_ms = await step(1);
  figures[`verify_${verify}_ms`] = await step(verify);
  figures[`prefill_${prefill}_ms`] = await timePasses(() => b.run(b.open(true), ids.slice(0, prefill), 0, false), () => {}, runs, warmup);
  figures.bridge_ms = 1000 * (await rt.browser.bridge_overhead(rt.backend, ids.slice(0, past + 1), past, runs));
  return figures;
}

/** Runs `task` unless another generation or benchmark is running, which is refused rather than interleaved. */
async function exclusive(task) {
  if (busy) {
    const err = new Error('a run is already in progress: wait for it to finish or cancel it');
    err.code = 'busy';
    throw err;
  }
  busy = true;
  try {
    return await task();
  } finally {
    busy = false;
  }
}

const HANDLERS = {
  load: async (id, message) => (await ensureLoaded(id, message.threads)).info,
  tokenize: async (id, { texts }) => {
    const rt = await ensureLoaded(id);
    return texts.map((text) => rt.tokenizer.encode(text, { add_special_tokens: false }).ids);
  },
  decode: async (id, { ids }) => {
    const rt = await ensureLoaded(id);
    const stream = rt.decoder.stream();
    return { pieces: ids.map((token) => stream.push([token])).concat([stream.end()]), text: rt.decoder.decode(ids) };
  },
  generate: (id, message) => exclusive(() => generate(id, message)),
  bench: (id, message) => exclusive(async () => {
    const rt = await ensureLoaded(id);
    try {
      return await bench(rt, message);
    } finally {
      rt.bridge.closeAll();
    }
  }),
  exactness: (id, { ids }) => exclusive(async () => {
    const rt = await ensureLoaded(id);
    rt.bridge.cancelled = false;
    try {
      return await positionIndependence(rt.bridge, ids);
    } finally {
      rt.bridge.closeAll();
    }
  }),
  cancel: async () => {
    const rt = loading && (await loading);
    if (rt && busy) rt.bridge.cancelled = true;
    return { cancelling: busy };
  },
};

function describe(err) {
  const text = String(err?.message ?? err);
  // Python re-raises a JS error as a PythonError whose message ends with the JS one.
  if (/\bcancelled\b/.test(text) && !err.code) return { code: 'cancelled', message: 'the run was cancelled', retryable: true };
  return { code: err?.code ?? 'error', message: text, retryable: err?.retryable ?? false };
}

self.onmessage = async ({ data }) => {
  const handler = HANDLERS[data.type];
  if (!handler) {
    post({ id: data.id, type: 'error', error: { code: 'error', message: `unknown request ${data.type}`, retryable: false } });
    return;
  }
  try {
    post({ id: data.id, type: 'done', result: await handler(data.id, data) });
  } catch (err) {
    post({ id: data.id, type: 'error', error: describe(err) });
  }
};
