/**
 * Where a pass's time goes under onnxruntime-web's WASM backend, operator by operator: the passes that
 * harness.js's passTimes times (decode-1 and verify-6 after a 32-token past, prefill-30), run with onnxruntime's
 * profiler on. Under WASM the profiler prints its events to stdout; they are gathered here and summed by operator
 * over each kind's timed passes (its warm-up passes left out). The profiler adds a cost of its own to every node,
 * and the parallel executor may run two nodes at once, so read the shares rather than the times.
 *
 * Usage: node benchmarks/wasm_profile.mjs --model DIR [--graph FILE] [--threads N] [--top N]
 *   DIR: an export folder (manifest.json and the graph it names), e.g. one under ~/.cache/onepass/models/.
 *   FILE: another graph with the export's inputs and outputs, profiled instead of the manifest's: the stock int8
 *     quantisation of the same export (benchmarks/peers.py's stock_int8_folder) puts the two side by side.
 * Prints one JSON object to stdout. (It runs the passes in a child process of its own, whose stdout carries the
 * profile, into a file.)
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import * as ort from 'onnxruntime-web';

import { OnnxBridge } from '../runtime/bridge.js';
import { median, passTimes, SESSION_OPTIONS } from '../runtime/harness.js';
import { readExport } from '../model_export/read_export.mjs';
import { asExportGraph } from './export_graph.mjs';

const RUNS = 10;
const WARMUP = 3;
const IDS = Array.from({ length: 38 }, (_, i) => 1000 + i);
// How the child hands its summary back on stderr, apart from onnxruntime's own messages.
const TIMED = 'wasm_profile: ';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    graph: { type: 'string' },
    threads: { type: 'string', default: '1' },
    top: { type: 'string', default: '12' },
    child: { type: 'boolean', default: false },
  },
});
if (!values.model) throw new Error('usage: wasm_profile.mjs --model DIR [--graph FILE] [--threads N] [--top N]');

/** Kernel time by operator over the passes `runs` (model_run events): per pass, with each operator's share. */
function byOperator(events, runs, top) {
  const spans = runs.map((run) => [run.ts, run.ts + run.dur]);
  const totals = new Map();
  let all = 0;
  for (const event of events) {
    if (event.cat !== 'Node' || !event.name.endsWith('_kernel_time')) continue;
    if (!spans.some(([from, to]) => event.ts >= from && event.ts <= to)) continue;
    const { op } = event;
    const [us, nodes] = totals.get(op) ?? [0, 0];
    totals.set(op, [us + event.dur, nodes + 1]);
    all += event.dur;
  }
  const perPass = (us) => Math.round(us / runs.length / 10) / 100;
  return {
    pass_ms: Math.round(median(runs.map((run) => run.dur)) / 100) / 10,
    kernels_ms: perPass(all),
    operators: [...totals].sort((a, b) => b[1][0] - a[1][0]).slice(0, top).map(([op, [us, nodes]]) => (
      { op, nodes: nodes / runs.length, ms: perPass(us), share: Math.round((us / all) * 1000) / 1000 })),
  };
}

/** The profiled passes, in a child process: onnxruntime writes its profile to that process's stdout. */
async function child() {
  console.log = console.error;
  const { manifest, model } = readExport(values.model, values.graph);
  ort.env.wasm.numThreads = Number(values.threads);
  const session = await ort.InferenceSession.create(model, { ...SESSION_OPTIONS, enableProfiling: true });
  const bridge = new OnnxBridge(ort, asExportGraph(ort, session, manifest), manifest);
  const timed = await passTimes(bridge, IDS, { runs: RUNS, warmup: WARMUP });
  session.endProfiling();
  await session.release();
  const summary = {
    graph: values.graph ?? manifest.graph, ort: ort.env.versions.web, threads: ort.env.wasm.numThreads, timed_with_profiler: timed,
  };
  process.stderr.write(`${TIMED}${JSON.stringify(summary)}\n`);
}

/**
 * Runs the child: its summary, and each profile event's time, duration, kind and operator. The child's stdout is a
 * file, not a pipe: at two threads and more onnxruntime's threads write the profile through Node's main thread,
 * which a pass blocks, so into a pipe the child never finished.
 */
async function profile() {
  const events = [];
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'wasm-profile-'));
  const out = path.join(folder, 'profile.json');
  const fd = fs.openSync(out, 'w');
  const args = [fileURLToPath(import.meta.url), '--child', '--model', values.model, '--threads', values.threads,
    ...(values.graph ? ['--graph', values.graph] : [])];
  const run = spawn(process.execPath, args, { stdio: ['ignore', fd, 'pipe'] });
  let summary = null;
  let errors = '';
  readline.createInterface({ input: run.stderr }).on('line', (line) => {
    if (line.startsWith(TIMED)) summary = JSON.parse(line.slice(TIMED.length));
    else errors += `${line}\n`;
  });
  const status = await new Promise((resolve) => run.on('close', resolve));
  fs.closeSync(fd);
  try {
    for await (const line of readline.createInterface({ input: fs.createReadStream(out) })) {
      const text = line.trim().replace(/,$/, '');
      if (!text.startsWith('{"cat"')) continue;
      const { cat, name, ts, dur, args: detail } = JSON.parse(text);
      events.push({ cat, name, ts, dur, op: detail?.op_name });
    }
  } finally {
    fs.rmSync(folder, { recursive: true, force: true });
  }
  if (status !== 0 || !summary) throw new Error(`the profiled run failed (${status}):\n${errors.slice(-2000)}`);
  return { summary, events };
}

if (values.child) {
  await child();
} else {
  const { summary: report, events } = await profile();
  // passTimes ran the past's pass, then each kind's warm-up and timed passes in turn, in the order of its figures.
  const kinds = Object.keys(report.timed_with_profiler).filter((key) => key.endsWith('_ms')).map((key) => key.slice(0, -3));
  const runs = events.filter((event) => event.name === 'model_run').sort((a, b) => a.ts - b.ts);
  if (runs.length !== 1 + kinds.length * (WARMUP + RUNS)) {
    throw new Error(`expected ${1 + kinds.length * (WARMUP + RUNS)} profiled passes, got ${runs.length}`);
  }
  kinds.forEach((kind, k) => {
    const first = 1 + k * (WARMUP + RUNS) + WARMUP;
    report[kind] = byOperator(events, runs.slice(first, first + RUNS), Number(values.top));
  });
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}
