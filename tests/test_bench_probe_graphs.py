"""benchmarks/probe_graphs.py: the timing probes of our exact graph, written from the tiny export and run."""

import numpy as np
import onnx
import pytest

from benchmarks.probe_graphs import FUSED, VARIANTS, main, matmul_sites
from onepass.backends.native import NativeModel


def test_it_finds_every_weight_matmul_and_names_its_kind(tiny_export):
    graph = onnx.load(tiny_export / "model.onnx").graph
    sites = matmul_sites(graph)
    assert len(sites) == sum(node.op_type == "MatMulInteger" for node in graph.node)
    kinds = [site["kind"] for site in sites]
    assert kinds.count("head") == 1 and set(kinds) == FUSED["all"]
    assert len({kinds.count(kind) for kind in FUSED["all"] - {"head"}}) == 1  # one of each a layer


@pytest.mark.parametrize("name", ["all", "all-nopred", "nopred"])
def test_each_probe_runs_and_changes_what_it_says(tiny_export, tmp_path, monkeypatch, name):
    monkeypatch.setattr("sys.argv", ["probe_graphs", "--model", str(tiny_export), "--out", str(tmp_path), "--variant", name])
    main()
    probe = onnx.load(tmp_path / f"{name}.onnx")
    ops = [node.op_type for node in probe.graph.node]
    fused = name.startswith("all")
    assert ("MatMulInteger" in ops) != fused and ("DynamicQuantizeMatMul" in ops) == fused
    assert ("TopK" in ops) != name.endswith("nopred")
    ids = list(range(3, 20))
    ours = NativeModel(tiny_export, 1).outputs(ids, None, logits=True)[0]["logits"]
    theirs = NativeModel(tiny_export, 1, file=str(tmp_path / f"{name}.onnx")).outputs(ids, None, logits=True)[0]["logits"]
    assert ours.shape == theirs.shape
    # Without the predictions the logits are ours bit for bit; with one scale for a whole pass they are not.
    assert np.array_equal(ours, theirs) != fused


def test_every_variant_is_known():
    assert set(VARIANTS) == {*FUSED, "nopred", "all-nopred"}
