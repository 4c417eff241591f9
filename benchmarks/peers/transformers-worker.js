// transformers.js on the stock int8 quantisation of our float32 export, timed the way bench_browser.py times ours.
//
// Everything comes from localhost: the model folder (env.localModelPath, remote models off) and onnxruntime-web's
// WASM (the build transformers.js would otherwise fetch from a CDN). A pass is the model's forward with
// past_key_values, the lowest level transformers.js exposes; it returns the logits of every new position and the
// new KV cache as JavaScript tensors, so their copies out of WASM are in the time.
import { AutoModelForCausalLM, Tensor, env } from './lib/transformers/transformers.min.js';

const MODEL = 'stock-int8';
const FILE = 'onnx/model_quantized.onnx';
const PAST = 32;
let model = null;

env.allowRemoteModels = false;
env.allowLocalModels = true;
env.localModelPath = new URL('models/', location.href).href;
env.backends.onnx.wasm.wasmPaths = {
  mjs: new URL('lib/ort/ort-wasm-simd-threaded.asyncify.mjs', location.href).href,
  wasm: new URL('lib/ort/ort-wasm-simd-threaded.asyncify.wasm', location.href).href,
};

async function cached() {
  const cache = await caches.open(env.cacheKey);
  return (await cache.match(new URL(`${MODEL}/${FILE}`, env.localModelPath).href)) !== undefined;
}

async function load({ threads }) {
  const fromCache = await cached();
  env.backends.onnx.wasm.numThreads = threads;
  const began = performance.now();
  model = await AutoModelForCausalLM.from_pretrained(MODEL, { dtype: 'q8', device: 'wasm' });
  return {
    load_ms: performance.now() - began,
    load_from: fromCache ? 'browser cache (Cache API)' : 'localhost',
    threads: env.backends.onnx.wasm.numThreads,
    versions: { transformers: env.version, onnxruntime_web: env.backends.onnx.versions?.web },
  };
}

function int64(values, dims) {
  return new Tensor('int64', BigInt64Array.from(values, BigInt), dims);
}

// One forward pass over `ids` after `past` (a cache from an earlier pass, or null); returns the next pass's cache.
async function forward(ids, past) {
  const start = past ? past['past_key_values.0.key'].dims[2] : 0;
  const outputs = await model.forward({
    input_ids: int64(ids, [1, ids.length]),
    attention_mask: int64(new Array(start + ids.length).fill(1), [1, start + ids.length]),
    position_ids: int64(ids.map((_, i) => start + i), [1, ids.length]),
    past_key_values: past,
  });
  const present = {};
  for (const [name, tensor] of Object.entries(outputs)) {
    if (name.startsWith('present')) present[name.replace('present', 'past_key_values')] = tensor;
  }
  return present;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function measure(pass, warmups, repeats) {
  const times = [];
  for (let i = 0; i < warmups + repeats; i++) {
    const began = performance.now();
    await pass();
    if (i >= warmups) times.push(performance.now() - began);
  }
  return median(times);
}

async function bench({ ids, warmups, repeats }) {
  const past = await forward(ids.slice(0, PAST), null);
  return {
    decode_1_ms: await measure(() => forward(ids.slice(PAST, PAST + 1), past), warmups, repeats),
    verify_6_ms: await measure(() => forward(ids.slice(PAST, PAST + 6), past), warmups, repeats),
    prefill_30_ms: await measure(() => forward(ids.slice(0, 30), null), warmups, repeats),
  };
}

const OPS = { load, bench };

self.onmessage = async ({ data: { id, op, args } }) => {
  try {
    self.postMessage({ id, result: await OPS[op](args) });
  } catch (error) {
    self.postMessage({ id, error: String(error?.stack ?? error) });
  }
};
