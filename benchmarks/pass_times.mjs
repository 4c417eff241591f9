/**
 * Pass times of several graphs of one export under onnxruntime-web's WASM backend in Node, without the profiler (whose
 * cost per node inflates small nodes): harness.js's passTimes (decode-1 and verify-6 after a 32-token past,
 * prefill-30) for each graph in turn, a fresh session each, round after round, so a busy spell hits every graph alike.
 * Prints each graph's figures per round, their medians, and each graph's median ratio to the first, round by round.
 *
 * Usage: node benchmarks/pass_times.mjs --model DIR [--graph FILE ...] [--threads N] [--rounds N]
 *   DIR: an export folder (its manifest's graph comes first); each FILE: another graph with the export's inputs, e.g.
 *   the stock int8 one (benchmarks/peers.py's stock_int8_folder), which export_graph.mjs adapts.
 */
import { parseArgs } from 'node:util';

import * as ort from 'onnxruntime-web';

import { OnnxBridge } from '../runtime/bridge.js';
import { median, passTimes, SESSION_OPTIONS } from '../runtime/harness.js';
import { readExport } from '../model_export/read_export.mjs';
import { asExportGraph } from './export_graph.mjs';

const IDS = Array.from({ length: 38 }, (_, i) => 1000 + i);
const KINDS = ['decode_1_ms', 'verify_6_ms', 'prefill_30_ms'];

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    graph: { type: 'string', multiple: true, default: [] },
    threads: { type: 'string', default: '1' },
    rounds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '7' },
  },
});
if (!values.model) throw new Error('usage: pass_times.mjs --model DIR [--graph FILE ...] [--threads N] [--rounds N]');
console.log = console.error; // onnxruntime's WASM module writes through console.log; stdout keeps the one JSON result
ort.env.wasm.numThreads = Number(values.threads);

const graphs = [undefined, ...values.graph];
const rounds = graphs.map(() => []);
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [g, graph] of graphs.entries()) {
    const { manifest, model } = readExport(values.model, graph);
    const session = await ort.InferenceSession.create(model, SESSION_OPTIONS);
    const bridge = new OnnxBridge(ort, asExportGraph(ort, session, manifest), manifest);
    const times = await passTimes(bridge, IDS, { runs: Number(values.runs), warmup: 2 });
    await session.release();
    rounds[g].push(KINDS.map((kind) => Math.round(times[kind] * 10) / 10));
  }
}
const round3 = (x) => Math.round(x * 1000) / 1000;
const report = {
  ort: ort.env.versions.web,
  threads: ort.env.wasm.numThreads,
  graphs: graphs.map((graph, g) => ({
    graph: graph ?? 'the manifest\'s',
    rounds: rounds[g],
    median_ms: Object.fromEntries(KINDS.map((kind, k) => [kind, median(rounds[g].map((r) => r[k]))])),
    ratio_to_first: Object.fromEntries(KINDS.map((kind, k) => [kind.replace('_ms', ''),
      round3(median(rounds[g].map((r, i) => r[k] / rounds[0][i][k])))])),
  })),
};
process.stdout.write(`${JSON.stringify(report, null, 1)}\n`);
