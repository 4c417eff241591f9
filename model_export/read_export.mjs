/**
 * An export folder as Node's scripts read it (model_export/wasm_check.mjs, benchmarks/wasm_profile.mjs): its
 * manifest.json and the bytes of the graph it names.
 */
import fs from 'node:fs';
import path from 'node:path';

// fs.readFileSync stops at 2 GiB (as would a single-file ONNX model's protobuf).
const MAX_MODEL_BYTES = 2 ** 31 - 1;

/**
 * { manifest, model }: the folder's manifest, and its graph as a Uint8Array for ort.InferenceSession.create; `graph`,
 * a file's path, reads that graph instead of the one the manifest names.
 */
export function readExport(modelDir, graph = undefined) {
  const manifest = JSON.parse(fs.readFileSync(path.join(modelDir, 'manifest.json'), 'utf8'));
  const file = graph ?? path.join(modelDir, manifest.graph);
  const { size } = fs.statSync(file);
  if (size > MAX_MODEL_BYTES) {
    throw new Error(`${file} is ${size} bytes; the model must stay under 2 GiB`);
  }
  const buf = fs.readFileSync(file);
  return { manifest, model: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) };
}
