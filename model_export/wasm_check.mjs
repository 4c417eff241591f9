/**
 * Position-independence check (and, with --bench, pass times) for an export under onnxruntime-web's WASM
 * backend in Node: the same harness the pages' worker uses (runtime/harness.js), on the same
 * bridge (runtime/bridge.js) and session options, so Node and the browser check one thing.
 *
 * Usage: node model_export/wasm_check.mjs --model DIR --check CHECK_JSON_FILE [--threads N] [--bench]
 *   DIR holds manifest.json and the graph it names (model.ort); CHECK_JSON_FILE is {runs: [{ids, cases}]}: texts' token
 *   ids and the checks to run on each, as model_export/check.py's `cases` defines them (model_export.check.wasm_runs
 *   writes it). The texts share one session: Node sets onnxruntime-web's threads once a process.
 *
 * Prints one JSON object to stdout, with a result per text in `runs`; all logging goes to stderr. Exit status: 0 when
 * every check is bit-identical, 1 when some check differs, 2 on error.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';

import * as ort from 'onnxruntime-web';

import { OnnxBridge } from '../runtime/bridge.js';
import { passTimes, positionIndependence, SESSION_OPTIONS } from '../runtime/harness.js';
import { readExport } from './read_export.mjs';

// onnxruntime's WASM module writes through console.log; keep stdout for the one JSON result.
console.log = console.error;

function parseCli() {
  const { values } = parseArgs({
    options: {
      model: { type: 'string' },
      check: { type: 'string' },
      threads: { type: 'string', default: '1' },
      bench: { type: 'boolean', default: false },
    },
  });
  if (!values.model || !values.check) {
    throw new Error('usage: wasm_check.mjs --model DIR --check CHECK_JSON_FILE [--threads N] [--bench]');
  }
  const threads = Number(values.threads);
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`--threads must be a positive integer, got ${values.threads}`);
  }
  return { modelDir: values.model, checkFile: values.check, threads, bench: values.bench };
}

function readCheck(file) {
  const { runs } = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (!Array.isArray(runs) || !runs.length) throw new Error(`${file} must hold {runs: [{ids, cases}]}, at least one`);
  for (const { ids, cases } of runs) {
    if (!Array.isArray(ids) || ids.length < 2 || !ids.every((t) => Number.isInteger(t) && t >= 0)) {
      throw new Error(`${file}: each run must hold at least 2 non-negative integer token ids`);
    }
    if (!Array.isArray(cases) || !cases.length) throw new Error(`${file}: a run names no checks`);
  }
  return runs;
}

const round = (x) => Math.round(x * 1000) / 1000;

async function main(report) {
  const args = parseCli();
  report.threads_requested = args.threads;
  const runs = readCheck(args.checkFile);
  const { manifest, model } = readExport(args.modelDir);

  ort.env.wasm.numThreads = args.threads;
  const t0 = performance.now();
  const session = await ort.InferenceSession.create(model, SESSION_OPTIONS);
  report.load_ms = round(performance.now() - t0);
  report.model_bytes = model.byteLength;
  // Where WASM threads are unavailable onnxruntime-web only warns and drops to one thread.
  report.threads = ort.env.wasm.numThreads;
  if (report.threads !== args.threads) {
    report.threads_note = `requested ${args.threads} threads, onnxruntime-web fell back to ${report.threads}`;
  }
  const bridge = new OnnxBridge(ort, session, manifest);
  report.runs = [];
  for (const { ids, cases } of runs) {
    const { checks, all_identical: identical } = await positionIndependence(bridge, ids, cases);
    report.runs.push({ num_ids: ids.length, checks, all_identical: identical });
  }
  report.all_identical = report.runs.every((run) => run.all_identical);
  if (args.bench) report.bench = { threads: report.threads, ...(await passTimes(bridge, runs[0].ids)) };
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
