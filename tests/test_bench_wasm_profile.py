"""benchmarks/wasm_profile.mjs: onnxruntime's profile of harness.js's passes, summed by operator, on the tiny export."""

import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Node profiles the passes

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "wasm_profile.mjs"


def test_the_profile_names_where_each_kind_of_pass_spends_its_time(tiny_export):
    done = subprocess.run(["node", str(SCRIPT), "--model", str(tiny_export), "--top", "50"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["threads"] == 1 and set(report["timed_with_profiler"]) >= {"decode_1_ms", "verify_6_ms", "prefill_30_ms"}
    for kind in ("decode_1", "verify_6", "prefill_30"):
        operators = {entry["op"]: entry for entry in report[kind]["operators"]}
        # The tiny model has 15 weight matmuls, each an int8 MatMulInteger (model_export/quantize.py), in every pass.
        assert operators["MatMulInteger"]["nodes"] == 15
        assert report[kind]["pass_ms"] > 0 and abs(sum(entry["share"] for entry in operators.values()) - 1) < 0.01


def test_another_graph_of_the_same_export_is_profiled_beside_ours_at_two_threads(tiny_export, tiny_stock_graph):
    """--graph: the stock int8 graph (conftest's tiny_stock_graph) runs the same passes; its weight matmuls are
    onnxruntime's fused dynamic-quantisation kernels instead of our MatMulInteger. At two threads, as FINDINGS reads
    them (the real model's profile, 115 MB, never finished there while the child's stdout was a pipe; the tiny one's
    did)."""
    done = subprocess.run(["node", str(SCRIPT), "--model", str(tiny_export), "--graph", str(tiny_stock_graph), "--top", "80",
                           "--threads", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["graph"] == str(tiny_stock_graph) and report["threads"] == 2
    for kind in ("decode_1", "verify_6", "prefill_30"):
        nodes = {entry["op"]: entry["nodes"] for entry in report[kind]["operators"]}
        fused = nodes.get("DynamicQuantizeMatMul", 0) + nodes.get("MatMulIntegerToFloat", 0)
        assert fused > 0 and fused + nodes.get("MatMulInteger", 0) == 15, nodes
