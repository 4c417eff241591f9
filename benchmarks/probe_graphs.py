"""Timing probes of our exact graph (issue 41): what its parts cost against the stock int8 graph, pass by pass.

    .venv/bin/python -m benchmarks.probe_graphs --model EXPORT --out DIR [--variant NAME ...]
    node benchmarks/pass_times.mjs --model EXPORT --graph DIR/all.onnx ... --threads 2 --rounds 8

Each variant is the export's ``model.onnx`` with one thing changed, written to DIR/NAME.onnx for ``pass_times.mjs``
(which times each graph in turn, round by round, against the export's own):

- ``down``, ``o``, ``gateup``, ``qkv``, ``head``, ``all``: those matmuls' row-wise quantising chain, ``MatMulInteger``
  and scale multiplications replaced by onnxruntime's fused ``DynamicQuantizeMatMul``, the stock graph's kernel. It
  takes one scale for the whole input, not one a row, so a row's numbers then depend on the other rows of the pass:
  these graphs are for timing only, and their logits are wrong by design.
- ``nopred`` and ``all-nopred``: without the predictions the graph computes over the vocabulary (argmax, top-k and
  their probabilities), as the stock graph hands its caller every logit instead (``export_graph.mjs`` then fetches
  the logits, as for the stock graph).

benchmarks/FINDINGS.md, "What our exact pass pays against the stock kernels" has the figures.
"""

import argparse
import json
from pathlib import Path

import onnx

from model_export.graph import MS_DOMAIN, Rewriter, consumers, producers

MATMULS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
FUSED = {"down": {"down_proj"}, "o": {"o_proj"}, "gateup": {"gate_proj", "up_proj"}, "qkv": {"q_proj", "k_proj", "v_proj"},
         "head": {"head"}, "all": {*MATMULS, "head"}}
VARIANTS = [*FUSED, "nopred", "all-nopred"]
PREDICTIONS = ("argmax", "topk_ids", "topk_probs")  # the manifest's keys for them (model_export/outputs.py)


def matmul_sites(graph: onnx.GraphProto) -> list[dict]:
    """Each weight matmul as quantize.py writes it: x · (127 / m) → Round → Clip → + 128 → Cast → MatMulInteger → Cast →
    × column scale → × row scale. Gives the float input x, the int8 weights, the column scales, the float output, the
    nodes from MatMulInteger on, and which matmul it is (by its output's name; ``head`` is the output layer)."""
    made, used = producers(graph), consumers(graph)

    def only(name: str, op: str) -> onnx.NodeProto:
        (node,) = used[name]
        assert node.op_type == op, (name, node.op_type, op)
        return node

    sites = []
    for matmul in (node for node in graph.node if node.op_type == "MatMulInteger"):
        cast = only(matmul.output[0], "Cast")
        column = only(cast.output[0], "Mul")
        row = only(column.output[0], "Mul")
        node = made[matmul.input[0]]
        for op in ("Cast", "Add", "Clip", "Round"):
            assert node.op_type == op, (matmul.name, node.op_type, op)
            node = made[node.input[0]]
        assert node.op_type == "Mul", (matmul.name, node.op_type)
        out = row.output[0]
        kind = next((name for name in MATMULS if f"/{name}/" in out), "head")
        sites.append({"x": node.input[0], "weights": matmul.input[1], "scale": column.input[1], "out": out,
                      "drop": {matmul.name, cast.name, column.name, row.name}, "kind": kind, "name": matmul.name})
    return sites


def variant(model: onnx.ModelProto, name: str, predictions: set[str]) -> onnx.ModelProto:
    """The probe ``name`` of ``model``; ``predictions``: the names of its prediction outputs."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    graph = probe.graph
    fused = {site["name"]: site for site in matmul_sites(graph)
             if site["kind"] in FUSED.get(name.removesuffix("-nopred"), ())}
    dropped = set().union(*(site["drop"] for site in fused.values()))
    rewriter = Rewriter(probe, "probe")

    def replace(node: onnx.NodeProto, out: list) -> bool:
        # The fused node takes the MatMulInteger's place, so the nodes stay in topological order.
        if site := fused.get(node.name):
            rewriter.node(out, "DynamicQuantizeMatMul", [site["x"], site["weights"], site["scale"]], domain=MS_DOMAIN,
                          outputs=[site["out"]])
        return node.name in dropped

    rewriter.replace_nodes(replace)
    if name.endswith("nopred"):
        outputs = [value for value in graph.output if value.name not in predictions]
        del graph.output[:]
        graph.output.extend(outputs)
    # Without the nodes no output needs any more (each fused input's quantising chain, the predictions).
    needed, kept = {value.name for value in graph.output}, []
    for node in reversed(graph.node):
        if any(name in needed for name in node.output):
            kept.append(node)
            needed.update(node.input)
    del graph.node[:]
    graph.node.extend(kept[::-1])
    rewriter.drop_unused_initializers()
    if fused:
        rewriter.use_domain(MS_DOMAIN)
    return probe


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="an export folder (its model.onnx)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--variant", action="append", choices=VARIANTS, help="default: every one")
    args = parser.parse_args()
    model = onnx.load(args.model / "model.onnx")
    outputs = json.loads((args.model / "manifest.json").read_text())["outputs"]
    predictions = {outputs[key] for key in PREDICTIONS}
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.variant or VARIANTS:
        probe = variant(model, name, predictions)
        onnx.save(probe, args.out / f"{name}.onnx")
        print(f"{args.out / name}.onnx: {len(probe.graph.node)} nodes, against {len(model.graph.node)}")


if __name__ == "__main__":
    main()
