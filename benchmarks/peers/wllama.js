// wllama (llama.cpp in WASM) on the GGUF our exporter starts from, timed the way bench_browser.py times ours.
//
// wllama 3 has no low-level decode API any more (its source: "Low level API // TODO: add back"), so a pass is a
// raw completion with max_tokens 1 against llama-server's prompt cache: the cache holds the 32-token past, the
// request adds the new tokens, and the server's own timing of the prompt's evaluation (prompt_ms) is the pass.
// Prompts are texts, not token ids: a token-id prompt crashes wllama 3.8.1 ("Invalid typed array length").
// peers.py sends texts that re-tokenise to our ids, and this page checks the server's counts (cache_n, prompt_n).
import { Wllama } from './lib/wllama/index.js';

const MODEL = new URL('models/model.gguf', location.href).href;
const WASM = { default: './lib/wllama/wasm/wllama.wasm' };
let wllama = null;

async function cached() {
  return (await new Wllama(WASM).cacheManager.list()).some((entry) => entry.metadata?.originalURL === MODEL);
}

async function load(threads) {
  const fromCache = await cached();
  const began = performance.now();
  wllama = new Wllama(WASM, { suppressNativeLog: true });
  // n_gpu_layers 0: the CPU, as ours; n_parallel 1: one slot, so every request meets the cache the last one left.
  await wllama.loadModelFromUrl(MODEL, { n_threads: threads, n_gpu_layers: 0, n_parallel: 1, n_ctx: 1024 });
  return {
    load_ms: performance.now() - began,
    load_from: fromCache ? 'browser cache (OPFS)' : 'localhost',
    threads: wllama.getNumThreads(),
    multithread: wllama.isMultithread(),
    libllama: Wllama.getLibllamaVersion(),
  };
}

async function complete(prompt, cache) {
  const began = performance.now();
  const result = await wllama.createCompletion({ prompt, max_tokens: 1, temperature: 0, cache_prompt: cache });
  return { wall: performance.now() - began, timings: result.timings };
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

// One figure: `prepare` leaves the cache as the pass expects it, `pass` is timed; warm-ups first.
async function measure(prepare, pass, cachedTokens, newTokens, warmups, repeats) {
  const passes = [], walls = [];
  for (let i = 0; i < warmups + repeats; i++) {
    await prepare();
    const { wall, timings } = await pass();
    if (timings.cache_n !== cachedTokens || timings.prompt_n !== newTokens) {
      throw new Error(`wllama reused ${timings.cache_n} and evaluated ${timings.prompt_n} tokens, `
                      + `expected ${cachedTokens} and ${newTokens}`);
    }
    if (i >= warmups) {
      passes.push(timings.prompt_ms);
      walls.push(wall);
    }
  }
  return [median(passes), median(walls)];
}

// `texts`: the past (32 tokens), the past plus 1 and plus 6 tokens, and the 30 tokens of the prefill.
async function bench({ texts, counts, warmups, repeats }) {
  // A request whose prompt is all in the cache evaluates its last token again, leaving exactly the past cached.
  const toPast = () => complete(texts.past, true);
  const nothing = async () => {};
  const past = counts.past;
  const [decode, decodeWall] = await measure(
    toPast, () => complete(texts.decode, true), past, counts.decode - past, warmups, repeats);
  const [verify, verifyWall] = await measure(
    toPast, () => complete(texts.verify, true), past, counts.verify - past, warmups, repeats);
  const [prefill, prefillWall] = await measure(
    nothing, () => complete(texts.prefill, false), 0, counts.prefill, warmups, repeats);
  return {
    decode_1_ms: decode, verify_6_ms: verify, prefill_30_ms: prefill,
    wall_ms: { decode_1: decodeWall, verify_6: verifyWall, prefill_30: prefillWall },
  };
}

window.peer = { load, bench };
