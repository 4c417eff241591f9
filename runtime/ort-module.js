/**
 * onnxruntime-web's WebAssembly module, kept as ort makes it, so the model worker can place the model's bytes in
 * that module's heap and keep them there. model-worker.js names this file as ort's module script
 * (env.wasm.wasmPaths.mjs); it starts ort's own script unchanged (ort-wasm-simd-threaded.mjs, whose threads load
 * that script itself) and keeps what it gives.
 *
 * Why: ort copies a model handed to it from JavaScript into its heap, so while the session was made the tab held
 * the weights three times (the JavaScript copy, ort's copy, the session's tensors). A model already in ort's heap is
 * used where it lies (ort's createSession, onnxruntime-web 1.30, checks modelData.buffer === HEAPU8.buffer). With
 * harness.js's MODEL_IN_PLACE_OPTIONS the session goes on reading its weights from those bytes instead of copying
 * them, so they must stay allocated for the session's life; but createSession frees the model's bytes once the
 * session is made (`_free(modelDataOffset)` in its `finally`, whatever the options). So the module's `_free`, which
 * ort's JavaScript calls as a property of the module, skips the blocks heapBlock hands out: only their own free()
 * gives them back. ort's C++ never frees a buffer it was lent, and Emscripten's own glue holds `_free` in a
 * variable of its own, so nothing else is changed. WebAssembly memory never shrinks, so this also keeps the heap at
 * the model's size instead of the model's bytes plus the session's copy of them.
 *
 * The pin of onnxruntime-web keeps that behaviour; tests/test_browser_runtime.py checks the session was made from
 * the heap, the browser's position-independence checks that every pass reads the kept bytes as they were, and the
 * memory benchmark (benchmarks/bench_browser.py) measures ort's heap and the tab's peak.
 */
import startModule from '../../../vendor/ort/ort-wasm-simd-threaded.mjs';

import { OnepassError } from './errors.js';

let kept = null;
let freeInHeap = null;
const lent = new Set(); // offsets of the blocks heapBlock handed out and their free() has not given back

/** What ort calls to start its module (Emscripten's factory): the same, keeping the module and its lent blocks. */
export default async function startKept(config) {
  kept = await startModule(config);
  freeInHeap = kept._free;
  kept._free = (offset) => {
    if (!lent.has(offset)) freeInHeap(offset);
  };
  return kept;
}

/** The size of ort's WebAssembly memory in bytes (the model, the session's buffers, a pass's), or null before it starts. */
export const heapBytes = () => kept?.HEAPU8.length ?? null;

// The block starts `shift` bytes past a multiple of this (hooks/model.py's graph_shift).
const ALIGNMENT = 16;

/**
 * `size` bytes of ort's heap, for a model file, kept until free() is called (ort's own frees skip them): set(bytes,
 * at) fills them, view() is the Uint8Array to hand InferenceSession.create with MODEL_IN_PLACE_OPTIONS (the session
 * reads them for its life), free() gives them back when no session uses them. The block starts `shift` bytes past a
 * 16-byte boundary, where the manifest's `graph_alignment` says the file's weights then start on one (the exporter
 * names its values so that every large weight starts at one offset mod 16; the session reads them in place). Null
 * before ort's module has started; a heap too small throws a 'memory' error.
 */
export function heapBlock(size, shift = 0) {
  if (!kept) return null;
  const base = kept._malloc(size + 2 * ALIGNMENT);
  const offset = base && Math.ceil(base / ALIGNMENT) * ALIGNMENT + (shift % ALIGNMENT);
  if (!base) {
    const message = 'this tab could not set aside memory for the model: close other tabs, and reload the page';
    throw new OnepassError('memory', message, { retryable: true });
  }
  lent.add(offset);
  // HEAPU8 as ort itself reads it after a _malloc; nothing else allocates in this heap until the session is made.
  return {
    set: (bytes, at) => kept.HEAPU8.set(bytes, offset + at),
    view: () => new Uint8Array(kept.HEAPU8.buffer, offset, size),
    free: () => {
      lent.delete(offset);
      freeInHeap(base);
    },
  };
}
