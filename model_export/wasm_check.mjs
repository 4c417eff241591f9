/**
 * Position-independence check for the exported decoder under onnxruntime-web's WASM backend.
 *
 * The lesson needs a token's prediction to be independent of what else is in the pass: the
 * logits for position p must come out bit-for-bit the same whether p is computed in one full
 * pass, at the end of a shorter prefix pass, one token at a time on top of a KV cache, or
 * inside a multi-token chunk on top of a KV cache. Every check compares raw float32 bits
 * against the full pass F over all ids:
 *
 *   repeat_full  the full pass again (run-to-run determinism)
 *   prefix_<k>   a pass over ids[:k] with no past must reproduce F's rows 0..k-1
 *   kv_step1     prefill ids[:m], then one token per pass with the returned KV cache
 *   kv_chunk<c>  prefill ids[:m], then chunks of c tokens (the last one may be shorter)
 *
 * With --bench it also times decode-1, verify-6 and prefill-30 (median ms after warm-up).
 *
 * Usage: node model_export/wasm_check.mjs --model DIR --ids IDS_JSON_FILE [--threads N] [--bench]
 *   DIR holds model.onnx and manifest.json (whose `kv` block names the cache tensors and shapes);
 *   IDS_JSON_FILE is a JSON array of token ids.
 *
 * Prints one JSON object to stdout; all logging goes to stderr. Exit status: 0 when every check
 * is bit-identical, 1 when some check differs, 2 on error.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import * as ort from 'onnxruntime-web';

const KV_PREFILL = 7;
const CHUNK = 6;
const BENCH_PAST = 32;
const BENCH_PREFILL = 30;
const BENCH_VERIFY = 6;
const BENCH_WARMUP = 3;
const BENCH_RUNS = 10;
// A protobuf (and so a single-file ONNX model) and fs.readFileSync both stop at 2 GiB.
const MAX_MODEL_BYTES = 2 ** 31 - 1;

// onnxruntime's WASM module writes through console.log; keep stdout for the one JSON result.
console.log = console.error;

function parseCli() {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      ids: { type: 'string' },
      threads: { type: 'string', default: '1' },
      bench: { type: 'boolean', default: false },
    },
  });
  if (!values.model || !values.ids) {
    throw new Error('usage: wasm_check.mjs --model DIR --ids IDS_JSON_FILE [--threads N] [--bench]');
  }
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`--threads must be a positive integer, got ${values.threads}`);
  }
  return { modelDir: values.model, idsFile: values.ids, threads, bench: values.bench };
}

function readIds(file) {
  const ids = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!Array.isArray(ids) || ids.length < 2 || !ids.every((t) => Number.isInteger(t) && t >= 0)) {
    throw new Error(`${file} must hold a JSON array of at least 2 non-negative integer token ids`);
  }
  return ids;
}

function readKvSpec(modelDir) {
  const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, 'manifest.json'), 'utf8'));
  const kv = manifest.kv;
  if (!kv) throw new Error(`${modelDir}/manifest.json has no "kv" block`);
  const name = (format, i) => format.replaceAll('{i}', String(i));
  const layers = Array.from({ length: kv.num_layers }, (_, i) => ({
    inKey: name(kv.input_key, i),
    inValue: name(kv.input_value, i),
    outKey: name(kv.output_key, i),
    outValue: name(kv.output_value, i),
  }));
  return { heads: kv.num_kv_heads, headDim: kv.head_dim, layers };
}

function readModel(modelDir) {
  const file = path.join(modelDir, 'model.onnx');
  const { size } = fs.statSync(file);
  if (size > MAX_MODEL_BYTES) {
    throw new Error(`${file} is ${size} bytes; a single-file ONNX model must stay under 2 GiB`);
  }
  const buf = fs.readFileSync(file);
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

function checkNames(session, kv) {
  const missing = [
    ...kv.layers.flatMap((l) => [l.inKey, l.inValue]).filter((n) => !session.inputNames.includes(n)),
    ...kv.layers.flatMap((l) => [l.outKey, l.outValue]).filter((n) => !session.outputNames.includes(n)),
  ];
  if (missing.length) throw new Error(`model lacks the manifest's KV tensors: ${missing.join(', ')}`);
}

const int64 = (values, dims) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);

/**
 * One forward pass over `tokens` at positions start..start+L-1 on top of `past` (null: no past).
 * Returns the logits [L*V], the argmax per position and the present KV cache. Without
 * `withLogits` it fetches what the lesson's pages fetch: argmax, top-k and the KV cache.
 */
async function forward(session, kv, tokens, start, past, withLogits = true) {
  const L = tokens.length;
  const feeds = {
    input_ids: int64(tokens, [1, L]),
    attention_mask: int64(new Array(start + L).fill(1), [1, start + L]),
    position_ids: int64(tokens.map((_, j) => start + j), [1, L]),
  };
  const empty = () => new ort.Tensor('float32', new Float32Array(0), [1, kv.heads, 0, kv.headDim]);
  kv.layers.forEach((l, i) => {
    feeds[l.inKey] = past ? past[i].key : empty();
    feeds[l.inValue] = past ? past[i].value : empty();
  });
  if (!withLogits) {
    const fetches = session.outputNames.filter((name) => name !== 'logits');
    const out = await session.run(feeds, fetches);
    return { present: kv.layers.map((l) => ({ key: out[l.outKey], value: out[l.outValue] })) };
  }
  const out = await session.run(feeds);
  const logits = out.logits.data;
  const vocab = out.logits.dims[2];
  const argmax = out.argmax
    ? Array.from(out.argmax.data, Number)
    : Array.from({ length: L }, (_, j) => argmaxRow(logits.subarray(j * vocab, (j + 1) * vocab)));
  const present = kv.layers.map((l) => ({ key: out[l.outKey], value: out[l.outValue] }));
  return { logits, argmax, vocab, present };
}

function argmaxRow(row) {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/** Concatenate passes that together cover positions 0..n-1 in order. */
function concatPasses(passes) {
  const logits = new Float32Array(passes.reduce((s, p) => s + p.logits.length, 0));
  let offset = 0;
  for (const p of passes) {
    logits.set(p.logits, offset);
    offset += p.logits.length;
  }
  return { logits, argmax: passes.flatMap((p) => p.argmax), vocab: passes[0].vocab };
}

/** Compare `got` (positions 0..count-1) with the reference rows of `ref`, bit for bit. */
function compare(got, ref) {
  const V = ref.vocab;
  const positions = got.argmax.length;
  const a = new Uint32Array(got.logits.buffer, got.logits.byteOffset, positions * V);
  const b = new Uint32Array(ref.logits.buffer, ref.logits.byteOffset, positions * V);
  let rowsDiffering = 0;
  let maxAbsDiff = 0;
  for (let p = 0; p < positions; p++) {
    let rowDiffers = false;
    for (let i = p * V; i < (p + 1) * V; i++) {
      if (a[i] !== b[i]) {
        rowDiffers = true;
        const d = Math.abs(got.logits[i] - ref.logits[i]);
        if (!(d <= maxAbsDiff)) maxAbsDiff = d;
      }
    }
    if (rowDiffers) rowsDiffering++;
  }
  const argmaxFlips = got.argmax.filter((t, p) => t !== ref.argmax[p]).length;
  return {
    positions,
    rows_differing: rowsDiffering,
    argmax_flips: argmaxFlips,
    max_abs_diff: maxAbsDiff,
    bit_identical: rowsDiffering === 0,
  };
}

/** Prefill ids[:m], then feed the rest `step` tokens at a time with the returned KV cache. */
async function kvPasses(session, kv, ids, m, step) {
  const passes = [await forward(session, kv, ids.slice(0, m), 0, null)];
  for (let start = m; start < ids.length; start += step) {
    const chunk = ids.slice(start, start + step);
    passes.push(await forward(session, kv, chunk, start, passes.at(-1).present));
  }
  return concatPasses(passes);
}

function prefixLengths(n) {
  const ks = [1, 2, 7, 16, 17, Math.floor(n / 2), n - 1].filter((k) => k >= 1 && k < n);
  return [...new Set(ks)].sort((x, y) => x - y);
}

async function runChecks(session, kv, ids) {
  const n = ids.length;
  const full = await forward(session, kv, ids, 0, null);
  const checks = { repeat_full: compare(await forward(session, kv, ids, 0, null), full) };
  for (const k of prefixLengths(n)) {
    checks[`prefix_${k}`] = compare(await forward(session, kv, ids.slice(0, k), 0, null), full);
  }
  const m = Math.min(KV_PREFILL, n - 1);
  checks.kv_step1 = { prefill: m, ...compare(await kvPasses(session, kv, ids, m, 1), full) };
  checks[`kv_chunk${CHUNK}`] = { prefill: m, ...compare(await kvPasses(session, kv, ids, m, CHUNK), full) };
  return checks;
}

const round = (x) => Math.round(x * 1000) / 1000;

const median = (xs) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Median wall time of `fn` in ms, after warm-up. */
async function timeIt(fn) {
  for (let i = 0; i < BENCH_WARMUP; i++) await fn();
  const times = [];
  for (let i = 0; i < BENCH_RUNS; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return round(median(times));
}

async function runBench(session, kv, ids, threads) {
  const need = Math.max(BENCH_PAST + BENCH_VERIFY, BENCH_PREFILL);
  const tokens = Array.from({ length: need }, (_, i) => ids[i % ids.length]);
  const { present: past } = await forward(session, kv, tokens.slice(0, BENCH_PAST), 0, null);
  const after = tokens.slice(BENCH_PAST);
  return {
    threads,
    runs: BENCH_RUNS,
    past: BENCH_PAST,
    decode_1_ms: await timeIt(() => forward(session, kv, after.slice(0, 1), BENCH_PAST, past, false)),
    [`verify_${BENCH_VERIFY}_ms`]: await timeIt(() => forward(session, kv, after.slice(0, BENCH_VERIFY), BENCH_PAST, past, false)),
    [`prefill_${BENCH_PREFILL}_ms`]: await timeIt(() => forward(session, kv, tokens.slice(0, BENCH_PREFILL), 0, null, false)),
  };
}

async function main(report) {
  const args = parseCli();
  report.threads_requested = args.threads;
  const ids = readIds(args.idsFile);
  const kv = readKvSpec(args.modelDir);
  const model = readModel(args.modelDir);

  ort.env.wasm.numThreads = args.threads;
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
  });
  report.load_ms = round(performance.now() - t0);
  report.model_bytes = model.byteLength;
  // Where WASM threads are unavailable onnxruntime-web only warns and drops to one thread.
  report.threads = ort.env.wasm.numThreads;
  if (report.threads !== args.threads) {
    report.threads_note = `requested ${args.threads} threads, onnxruntime-web fell back to ${report.threads}`;
  }
  checkNames(session, kv);
  report.has_argmax_output = session.outputNames.includes('argmax');
  report.num_ids = ids.length;

  report.checks = await runChecks(session, kv, ids);
  report.all_identical = Object.values(report.checks).every((c) => c.bit_identical);
  if (args.bench) report.bench = await runBench(session, kv, ids, report.threads);
  await session.release();
  return report.all_identical ? 0 : 1;
}

const report = { ort_version: ort.env.versions.web };
let status;
try {
  status = await main(report);
} catch (err) {
  report.error = String(err?.message ?? err);
  console.error(err);
  status = 2;
}
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
process.exit(status);
