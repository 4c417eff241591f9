/**
 * Another graph of an export run through the export's bridge (runtime/bridge.js), for the benchmarks that put it beside
 * ours (wasm_profile.mjs --graph, pass_times.mjs).
 *
 * `session` as the bridge's graph, for a graph that takes fewer inputs and answers fewer outputs than the export's
 * (the stock int8 graph, quantised from the float32 reference, takes no first_row and answers logits for every row
 * and the KV cache): feeds it does not take are dropped, its logits fetched in place of the predictions it does not
 * answer (argmax and top-k, which a caller of such a graph computes from them), and those answered by zeros, outside
 * the kernels' time (profiled or timed). The export's own graph, which answers every prediction, is returned as it is.
 */
export function asExportGraph(ort, session, manifest) {
  const takes = new Set(session.inputNames);
  const answers = new Set(session.outputNames);
  const { outputs } = manifest;
  const k = outputs.top_k;
  if ([outputs.argmax, outputs.topk_ids, outputs.topk_probs].every((name) => answers.has(name))) return session;
  return {
    async run(feeds, fetches) {
      const fed = Object.fromEntries(Object.entries(feeds).filter(([name]) => takes.has(name)));
      const out = await session.run(fed, [...new Set(fetches.map((name) => (answers.has(name) ? name : outputs.logits)))]);
      out[outputs.argmax] ??= new ort.Tensor('int64', new BigInt64Array(1), [1]);
      out[outputs.topk_ids] ??= new ort.Tensor('int64', new BigInt64Array(k), [1, k]);
      out[outputs.topk_probs] ??= new ort.Tensor('float32', new Float32Array(k), [1, k]);
      return out;
    },
  };
}
