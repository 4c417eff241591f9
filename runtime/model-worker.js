/**
 * The model's own worker, started by worker.js: it loads the model's files (loader.js), makes the ONNX
 * session and runs every pass (bridge.js), and times passes and checks them (harness.js) where they run.
 *
 * Why a second worker: making the session and starting Pyodide are both work on a worker's one thread; in one
 * worker they took turns, here they run side by side. Measured in Chromium on a 2-core machine, warm, from the
 * request to a loaded model, when each took about 2.2 s alone (the session from model.onnx, Pyodide without its
 * snapshot): 4.3-5.3 s side by side, against 5.4-7.7 s in one worker and 5.6 s one strictly after the other
 * (each slows the other down on two cores, so the gain is less than a whole phase). benchmarks/bench_browser.py
 * prints the phases.
 *
 * Messages in (each {id, type, ...}; answered {id, type: 'done', result} or {id, type: 'error', error}):
 *   load {threads}            the model: {id, type: 'progress', loaded, total, elsewhere} as bytes arrive (and
 *                             each second while another tab downloads what this one needs), the tokenizer's
 *                             bytes as {id, type: 'file', name, bytes} (transferred) as soon as they are here,
 *                             then {manifest, threads, ort, modelFromHeap, chunksKeptApart, modelKept,
 *                             draft, draftAnswers, timings: {ortStart, modelBytes, onnxSession, draftSession?}}
 *                             (`draft`: whether the draft model's session was made: the manifest has a `draft`;
 *                             `draftAnswers`: the text of its table of the model's answers, or null)
 *   open {session, kvCache}   | run {session, newIds, start, wantLogits, rowsFrom, hidden} | rollback {session, length}
 *   closeAll                  the bridge's calls (bridge.js), sessions named by the caller's ids
 *   draftStep {features, tokens, sampling}  one small pass of the draft model (bridge.js's DraftBridge)
 *   measure {ids, sizes, runs, warmup} | passTimes {ids, options} (with ort_heap_bytes, the size of ort's memory)
 *   | positionIndependence {ids, cases}
 *   cancel {cancelled}        handled at once, between the passes of a running request; the rest in order
 */
import * as ort from '../../../vendor/ort/ort.wasm.min.mjs';

import { DraftBridge, OnnxBridge, reply } from './bridge.js';
import { MODEL_IN_PLACE_OPTIONS, passTimes, positionIndependence, SESSION_OPTIONS, timePasses } from './harness.js';
import { loadModel } from './loader.js';
import { heapBlock, heapBytes } from './ort-module.js';

/** @import { LoadModel, ModelLoaded, ModelRequest, ModelTimings } from './contract.js' */

const SITE = new URL('../../../', import.meta.url);
const MAX_THREADS = 4; // a 0.5B model gains little past four threads, and the page must stay responsive

let bridge = null;
let draft = null; // the draft model's DraftBridge, when the site ships one
const cuts = new Map(); // seconds of each session's rollbacks since its last pass (the caller counts them as kv)

function threadCount(requested) {
  // WASM threads need SharedArrayBuffer, which only a cross-origin isolated page has.
  if (!self.crossOriginIsolated) return 1;
  return Math.max(1, Math.min(requested ?? navigator.hardwareConcurrency ?? 1, MAX_THREADS));
}

// The smallest model ort accepts (one Identity node, made with onnx.helper at opset 13): a session of it starts
// ort's module, whose heap then takes the model's bytes as they arrive (ort-module.js says why).
const STARTER = Uint8Array.from(atob('CAgSADo3ChAKAXgSAXkiCElkZW50aXR5EgFnWg8KAXgSCgoICAESBAoCCAFiDwoBeRIKCggIARIECgIIAUIECgAQDQ=='), (c) => c.charCodeAt(0));
let ortStarted = null;

/** ort's module, started once per worker (its thread count is fixed from then on). */
function startOrt(threads) {
  if (!ortStarted) {
    ort.env.wasm.wasmPaths = {
      mjs: new URL('./ort-module.js', import.meta.url).href,
      wasm: new URL('vendor/ort/ort-wasm-simd-threaded.wasm', SITE).href,
    };
    ort.env.wasm.numThreads = threadCount(threads);
    ortStarted = ort.InferenceSession.create(STARTER).then((starter) => starter.release());
  }
  return ortStarted;
}

/**
 * @param {number} id
 * @param {LoadModel} message
 * @returns {Promise<ModelLoaded>}
 */
async function load(id, { threads }) {
  const began = performance.now();
  /** @type {Partial<ModelTimings>} */
  const timings = {};
  // Started first: it runs while the manifest and the tokenizer arrive, and the model's first chunks wait for it.
  const started = startOrt(threads).then(() => {
    timings.ortStart = (performance.now() - began) / 1000;
  });
  const onFile = (name, bytes) => {
    if (name === 'tokenizer.json') self.postMessage({ id, type: 'file', name, bytes }, [bytes.buffer]);
  };
  const onProgress = (loaded, total, elsewhere) => self.postMessage({ id, type: 'progress', loaded, total, elsewhere });
  let block = null;
  const place = async (file, manifest) => {
    if (file.name !== manifest.graph) return new Uint8Array(file.size);
    await started;
    block = heapBlock(file.size, manifest.graph_alignment?.shift);
    return block ?? new Uint8Array(file.size); // no kept module: ort copies a JavaScript buffer, as it would
  };
  let model;
  try {
    model = await loadModel(new URL('model/', SITE), onProgress, onFile, place);
  } catch (err) {
    block?.free();
    throw err;
  }
  timings.modelBytes = (performance.now() - began) / 1000;
  const sessionBegan = performance.now();
  // From the heap, the session reads the model where its bytes lie, for as long as this worker lives (its block
  // is kept: ort-module.js); from a buffer, ort copies the bytes and the session copies every initializer.
  let onnx;
  try {
    onnx = block
      ? await ort.InferenceSession.create(block.view(), MODEL_IN_PLACE_OPTIONS)
      : await ort.InferenceSession.create(model.files[model.manifest.graph], SESSION_OPTIONS);
  } catch (err) {
    block?.free();
    throw err;
  }
  timings.onnxSession = (performance.now() - sessionBegan) / 1000;
  bridge = new OnnxBridge(ort, onnx, model.manifest);
  draft = await draftSession(model, timings);
  return {
    manifest: model.manifest,
    threads: ort.env.wasm.numThreads,
    ort: ort.env.versions.web,
    modelFromHeap: Boolean(block),
    chunksKeptApart: model.keptApart,
    modelKept: model.kept,
    draft: Boolean(draft),
    draftAnswers: draft ? answersText(model) : null,
    timings: /** @type {ModelTimings} */ (timings), // each phase timed by now: the graph's place waited for ort's start
  };
}

/** The table of the model's own answers that the draft ships for "Copy first" (draft.json's `answers`), or null. */
function answersText(model) {
  const bytes = model.files[model.manifest.draft.answers?.file];
  return bytes ? new TextDecoder().decode(bytes) : null;
}

/**
 * The draft model's session, from its bytes (a plain copy: it is a few MB), when the manifest has a `draft`; its
 * q for sampling is as many tokens as the draft says, or as the target's top k.
 */
async function draftSession(model, timings) {
  const spec = model.manifest.draft;
  if (!spec) return null;
  const name = spec.graph ?? 'draft.onnx';
  const bytes = model.files[name];
  if (!bytes) throw new Error(`the manifest's draft lists no ${name}`);
  const began = performance.now();
  const onnx = await ort.InferenceSession.create(bytes, SESSION_OPTIONS);
  timings.draftSession = (performance.now() - began) / 1000;
  return new DraftBridge(ort, onnx, spec, spec.top_k ?? model.manifest.outputs.top_k);
}

function loaded() {
  if (!bridge) throw new Error('the model is not loaded in its worker');
  return bridge;
}

/**
 * Each answer is the bridge's or the harness's own, unchanged.
 * @type {{[T in Exclude<ModelRequest['type'], 'cancel'>]: (id: number | undefined, message: Extract<ModelRequest, {type: T}>) => *}}
 */
const HANDLERS = {
  load,
  open: (id, { session, kvCache }) => loaded().open(kvCache, session),
  run: async (id, { session, newIds, start, wantLogits, rowsFrom, hidden }) => {
    const result = await loaded().run(session, newIds, start, wantLogits, rowsFrom, hidden);
    result.kvSeconds += cuts.get(session) ?? 0;
    cuts.delete(session);
    return result;
  },
  rollback: (id, { session, length }) => {
    cuts.set(session, (cuts.get(session) ?? 0) + loaded().rollback(session, length));
  },
  draftStep: (id, { features, tokens, sampling }) => {
    loaded();
    if (!draft) throw new Error('this site has no draft model');
    return draft.step(features, tokens, sampling);
  },
  closeAll: () => {
    cuts.clear();
    loaded().closeAll();
  },
  measure: async (id, { ids, sizes, runs, warmup }) => {
    const b = loaded();
    const ms = {};
    try {
      for (const n of sizes) {
        ms[n] = await timePasses(() => b.run(b.open(true), ids.slice(0, n), 0, false), () => b.closeAll(), runs, warmup);
      }
    } finally {
      b.closeAll();
    }
    return ms;
  },
  // With the size ort's memory has grown to by then (the model in the tab, for the benchmark).
  passTimes: async (id, { ids, options }) => ({ ...(await passTimes(loaded(), ids, options)), ort_heap_bytes: heapBytes() }),
  positionIndependence: async (id, { ids, cases }) => {
    try {
      return await positionIndependence(loaded(), ids, cases);
    } finally {
      loaded().closeAll();
    }
  },
};

/** A result's transferable buffers (a pass's logits and features, a draft's feature), so they move instead of being copied. */
const transfers = (result) => [result?.logits, result?.hidden, result?.feature].filter((a) => a?.buffer).map((a) => a.buffer);

let queue = Promise.resolve();

/** @param {MessageEvent<ModelRequest>} event */
self.onmessage = ({ data }) => {
  // The page's Cancel reaches a running request between its passes; everything else runs in order.
  if (data.type === 'cancel') {
    if (bridge) bridge.cancelled = data.cancelled;
    if (draft) draft.cancelled = data.cancelled;
    return;
  }
  // Plain fields only: the worker.js side rebuilds the error, with a LoadError's code and retry.
  // Each handler takes its own kind of message (HANDLERS' type): `data` is of the kind its type names.
  const handler = /** @type {(id: number | undefined, message: ModelRequest) => *} */ (HANDLERS[data.type]);
  const id = 'id' in data ? data.id : undefined; // a message told, not asked, wants no answer
  queue = queue.then(() => reply(id, () => handler(id, data), { transfer: transfers }));
};
