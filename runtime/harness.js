/**
 * The one JavaScript harness over the model's passes, used by the worker (the pages, the browser tests,
 * benchmarks/bench_browser.py) and by model_export/wasm_check.mjs (the same checks under Node). Every pass
 * goes through an OnnxBridge (bridge.js), fed exactly as the lesson feeds it.
 *
 * positionIndependence: a position's logits must be bit-for-bit the same in a full pass, again in a second
 * full pass, at the end of a shorter prefix pass, when the pass predicts only from a later row, one token at
 * a time on a KV cache, and inside chunks of 6 on a KV cache. The cases are defined once, in
 * model_export/check.py (`cases`), and handed in; that module runs the same list on native onnxruntime.
 * passTimes: median ms of decode-1 and verify-6 after a 32-token past, and of prefill-30 (its last row).
 */

/**
 * The options every onnxruntime-web session of the model is made with, in the worker and in the Node checks.
 * executionMode 'parallel': the sequential executor's memory-reuse planner costs about 3 s of session
 * creation on this graph of 4,300 nodes (measured in onnxruntime-web 1.30, Node, 1 thread: 6.2 s against
 * 3.2 s); the parallel executor skips that plan, and each node's kernel, and so every number, is the same.
 */
export const SESSION_OPTIONS = { executionProviders: ['wasm'], graphOptimizationLevel: 'all', executionMode: 'parallel' };

/**
 * The same, for a model file whose bytes stay where they are for the session's whole life (ort-module.js's
 * heapBlock, in the model's worker): the session then reads the ORT-format file in place, its initializers included,
 * instead of copying every one of them. Two onnxruntime session config entries do it
 * (onnxruntime_session_options_config_keys.h): `session.use_ort_model_bytes_directly` (no copy of the file) and
 * `session.use_ort_model_bytes_for_initializers` (initializers of more than 127 bytes point into the file; it
 * requires the first, and an ORT-format file: model.ort). Both require the bytes to outlive the session. The Node
 * checks hand ort a JavaScript buffer, which ort copies into its heap and frees once the session is made, so they
 * keep SESSION_OPTIONS: the same kernels on the same bytes, copied. onnxruntime-web joins `extra`'s keys with dots,
 * so the entries go under `session` without their prefix. Prepacking stays on: it keeps no second copy of this
 * graph's weights, and turning it off (`session.disable_prepacking`) saved no memory. Every
 * logit is the same bit for bit; the figures are in benchmarks/FINDINGS.md (issue 23).
 */
export const MODEL_IN_PLACE_OPTIONS = {
  ...SESSION_OPTIONS,
  extra: { session: { use_ort_model_bytes_directly: '1', use_ort_model_bytes_for_initializers: '1' } },
};

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median ms of `pass()` after `warmup` untimed runs; `reset()` runs untimed after each pass (e.g. a rollback). */
export async function timePasses(pass, reset, runs, warmup) {
  const times = [];
  for (let i = 0; i < warmup + runs; i++) {
    const began = performance.now();
    await pass();
    if (i >= warmup) times.push(performance.now() - began);
    reset();
  }
  return median(times);
}

/** Decode-1 and verify-n after a past, and a prefill from empty that predicts from its last row (ms). */
export async function passTimes(bridge, ids, { past = 32, verify = 6, prefill = 30, runs = 10, warmup = 3 } = {}) {
  const need = Math.max(past + verify, prefill);
  const tokens = Array.from({ length: need }, (_, i) => ids[i % ids.length]);
  const session = bridge.open(true);
  await bridge.run(session, tokens.slice(0, past), 0, false);
  const step = (n) => timePasses(() => bridge.run(session, tokens.slice(past, past + n), past, false),
    () => bridge.rollback(session, past), runs, warmup);
  const figures = { past, runs };
  figures.decode_1_ms = await step(1);
  figures[`verify_${verify}_ms`] = await step(verify);
  figures[`prefill_${prefill}_ms`] = await timePasses(
    () => bridge.run(bridge.open(true), tokens.slice(0, prefill), 0, false, prefill - 1), () => {}, runs, warmup);
  bridge.closeAll();
  return figures;
}

/** The logits of ids[rowsFrom:] from one fresh pass over ids. */
async function logitsOf(bridge, ids, rowsFrom = 0) {
  return (await bridge.run(bridge.open(true), ids, 0, true, rowsFrom)).logits;
}

/**
 * KV-cache steps after a prefill, one session for every stepped case of one prefill length: the prefill of ids[:m]
 * predicts from its last row, then for each case the cache is cut back to m (the rollback a rejected draft takes)
 * and ids[m:] fed `step` tokens at a time. Returns each case's logits from row m - 1 on, by name.
 */
async function steppedLogits(bridge, ids, m, steppedCases) {
  const session = bridge.open(true);
  const prefill = (await bridge.run(session, ids.slice(0, m), 0, true, m - 1)).logits;
  const found = {};
  for (const c of steppedCases) {
    bridge.rollback(session, m);
    const parts = [prefill];
    for (let start = m; start < ids.length; start += c.step) {
      parts.push((await bridge.run(session, ids.slice(start, start + c.step), start, true)).logits);
    }
    const whole = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    parts.reduce((offset, p) => (whole.set(p, offset), offset + p.length), 0);
    found[c.name] = whole;
  }
  return found;
}

/** How `got` (the rows from `first` on) compares with the full pass's rows, bit for bit. */
function compare(got, full, vocab, first = 0) {
  const positions = got.length / vocab;
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const b = new Uint32Array(full.buffer, full.byteOffset + first * vocab * 4, got.length);
  let rowsDiffering = 0;
  let argmaxFlips = 0;
  let maxAbsDiff = 0;
  for (let p = 0; p < positions; p++) {
    let differs = false;
    let best = [0, 0];
    for (let i = p * vocab; i < (p + 1) * vocab; i++) {
      if (a[i] !== b[i]) {
        differs = true;
        maxAbsDiff = Math.max(maxAbsDiff, Math.abs(got[i] - full[first * vocab + i]));
      }
      if (got[i] > got[p * vocab + best[0]]) best[0] = i - p * vocab;
      if (full[first * vocab + i] > full[first * vocab + p * vocab + best[1]]) best[1] = i - p * vocab;
    }
    if (differs) rowsDiffering++;
    if (best[0] !== best[1]) argmaxFlips++;
  }
  return {
    positions, rows_differing: rowsDiffering, argmax_flips: argmaxFlips, max_abs_diff: maxAbsDiff, bit_identical: rowsDiffering === 0,
  };
}

/**
 * Every case (model_export/check.py's `cases`: the one definition, handed in) compared with one full pass: a fresh
 * pass over the first `length` tokens predicting from row `rows_from`, or a prefill then KV-cache steps of `step`
 * (the cases of one prefill share it: `steppedLogits`; their rows are compared from the prefill's last on).
 */
export async function positionIndependence(bridge, ids, cases) {
  if (ids.length < 2) throw new Error('the position-independence check needs at least 2 tokens');
  if (!Array.isArray(cases) || !cases.length) throw new Error('the position-independence check needs its cases');
  const { logits: full, vocab } = await bridge.run(bridge.open(true), ids, 0, true);
  const checks = {};
  for (const c of cases) {
    if (!c.step) checks[c.name] = compare(await logitsOf(bridge, ids.slice(0, c.length), c.rows_from), full, vocab, c.rows_from);
  }
  for (const m of new Set(cases.filter((c) => c.step).map((c) => c.prefill))) {
    const stepped = await steppedLogits(bridge, ids, m, cases.filter((c) => c.step && c.prefill === m));
    for (const [name, logits] of Object.entries(stepped)) checks[name] = compare(logits, full, vocab, m - 1);
  }
  bridge.closeAll();
  const inOrder = Object.fromEntries(cases.map((c) => [c.name, checks[c.name]]));
  return { positions: ids.length, checks: inOrder, all_identical: Object.values(inOrder).every((c) => c.bit_identical) };
}
