/**
 * The position-independence check, run by onnxruntime-web in the browser itself: a position's
 * logits must be bit-for-bit the same in a full pass, at the end of a shorter prefix pass, one
 * token at a time on a KV cache, and inside a chunk of 6 on a KV cache (the same checks as
 * model_export/wasm_check.mjs under Node). Returns, per check, how many rows differ.
 */

const KV_PREFILL = 7;
const CHUNK = 6;

async function logitsOf(bridge, ids, start, session) {
  const id = session ?? bridge.open(true);
  const out = await bridge.run(id, ids, start, true);
  return { id, logits: out.logits, vocab: out.vocab };
}

/** Logits of ids[m:] fed `step` tokens at a time after a prefill of ids[:m], joined with the prefill's. */
async function kvLogits(bridge, ids, m, step) {
  const first = await logitsOf(bridge, ids.slice(0, m), 0);
  const parts = [first.logits];
  for (let start = m; start < ids.length; start += step) {
    parts.push((await logitsOf(bridge, ids.slice(start, start + step), start, first.id)).logits);
  }
  const whole = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((offset, p) => (whole.set(p, offset), offset + p.length), 0);
  return whole;
}

function rowsDiffering(got, full, vocab) {
  const a = new Uint32Array(got.buffer, got.byteOffset, got.length);
  const b = new Uint32Array(full.buffer, full.byteOffset, got.length);
  let rows = 0;
  for (let p = 0; p < got.length / vocab; p++) {
    for (let i = p * vocab; i < (p + 1) * vocab; i++) {
      if (a[i] !== b[i]) {
        rows++;
        break;
      }
    }
  }
  return rows;
}

export async function positionIndependence(bridge, ids) {
  const n = ids.length;
  const full = await logitsOf(bridge, ids, 0);
  const checks = {};
  const record = (name, logits) => {
    checks[name] = rowsDiffering(logits, full.logits, full.vocab);
  };
  record('repeat_full', (await logitsOf(bridge, ids, 0)).logits);
  for (const k of [...new Set([1, 2, 7, Math.floor(n / 2), n - 1])].filter((k) => k >= 1 && k < n)) {
    record(`prefix_${k}`, (await logitsOf(bridge, ids.slice(0, k), 0)).logits);
  }
  const m = Math.min(KV_PREFILL, n - 1);
  record('kv_step1', await kvLogits(bridge, ids, m, 1));
  record(`kv_chunk${CHUNK}`, await kvLogits(bridge, ids, m, CHUNK));
  return { positions: n, rows_differing: checks, all_identical: Object.values(checks).every((rows) => rows === 0) };
}
