/**
 * onnxruntime-web's WebAssembly module, kept as ort makes it, so the model worker can place the model's bytes in
 * that module's heap. model-worker.js names this file as ort's module script (env.wasm.wasmPaths.mjs); it starts
 * ort's own script unchanged (ort-wasm-simd-threaded.mjs, whose threads load that script itself) and keeps what it
 * gives.
 *
 * Why: ort copies a model handed to it from JavaScript into its heap, so while the session was made the tab held
 * the weights three times (the JavaScript copy, ort's copy, the session's tensors). A model already in ort's heap is
 * used where it lies (ort's createSession, onnxruntime-web 1.30, checks modelData.buffer === HEAPU8.buffer) and
 * freed once the session holds it. The pin of onnxruntime-web keeps that behaviour; tests/test_browser_runtime.py
 * checks the session was made from the heap, and the memory benchmark measures the peak.
 */
import startModule from '../../../vendor/ort/ort-wasm-simd-threaded.mjs';

import { OnepassError } from './errors.js';

let kept = null;

/** What ort calls to start its module (Emscripten's factory): the same, keeping the module. */
export default async function startKept(config) {
  kept = await startModule(config);
  return kept;
}

/** The size of ort's WebAssembly memory in bytes (the model, the session's buffers, a pass's), or null before it starts. */
export const heapBytes = () => kept?.HEAPU8.length ?? null;

/**
 * `size` bytes of ort's heap, for a model file: set(bytes, at) fills them, view() is the Uint8Array to hand
 * InferenceSession.create (which frees them), free() gives them back when no session is made. Null before ort's
 * module has started; a heap too small for `size` throws a 'memory' error.
 */
export function heapBlock(size) {
  if (!kept) return null;
  const offset = kept._malloc(size);
  if (!offset) {
    const message = 'this tab could not set aside memory for the model: close other tabs, and reload the page';
    throw new OnepassError('memory', message, { retryable: true });
  }
  // HEAPU8 as ort itself reads it after a _malloc; nothing else allocates in this heap until the session is made.
  return {
    set: (bytes, at) => kept.HEAPU8.set(bytes, offset + at),
    view: () => new Uint8Array(kept.HEAPU8.buffer, offset, size),
    free: () => kept._free(offset),
  };
}
