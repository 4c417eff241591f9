"""The manifest is the single description of an export: check it against the files and the graph."""

import onnx
import pytest

from model_export.cache import sha256_file
from model_export.check import load
from tests.conftest import manifest_of

QWEN_END_IDS = {151643, 151645}
QWEN_CONTROL_IDS = set(range(151643, 151657)) | set(range(151659, 151665))


@pytest.fixture(scope="module", params=["tiny_export", "real_export"])
def export(request):
    return request.getfixturevalue(request.param)


def test_files_have_the_listed_sizes_and_hashes(export):
    manifest = manifest_of(export)
    assert {f["name"] for f in manifest["files"]} == {manifest["graph"], "tokenizer.json"}
    assert manifest["graph"] == "model.ort"
    for entry in manifest["files"]:
        path = export / entry["name"]
        assert path.stat().st_size == entry["size"]
        assert sha256_file(path) == entry["sha256"]


def test_vocabulary_and_special_ids(export):
    manifest = manifest_of(export)
    assert manifest["vocab_size"] == 151936
    assert QWEN_END_IDS <= set(manifest["eos_ids"])
    assert set(manifest["special_ids"].values()) == QWEN_CONTROL_IDS


def test_graph_matches_the_manifest(export):
    manifest = manifest_of(export)
    session = load(export).onnx
    inputs = {i.name for i in session.get_inputs()}
    outputs = {o.name: o for o in session.get_outputs()}
    kv = manifest["kv"]
    for i in range(kv["num_layers"]):
        assert {kv["input_key"].format(i=i), kv["input_value"].format(i=i)} <= inputs
        assert {kv["output_key"].format(i=i), kv["output_value"].format(i=i)} <= set(outputs)
    assert set(manifest["inputs"].values()) <= inputs
    names = {key: value for key, value in manifest["outputs"].items() if key != "top_k"}
    assert set(names.values()) <= set(outputs)
    assert outputs[names["topk_ids"]].shape[-1] == manifest["outputs"]["top_k"] >= 10


def test_every_weight_matmul_is_quantised(export):
    manifest = manifest_of(export)
    layers = manifest["model"]["num_layers"]
    # q/k/v share one smoothed input, gate/up another; o, down and the output layer one each.
    assert manifest["quantisation"]["rewritten"] == {"matmul": 7 * layers + 1, "embedding": 1,
                                                     "smoothed_inputs": 4 * layers + 1, "shared_tables": 1}
    graph = onnx.load(str(export / "model.onnx"), load_external_data=False).graph
    weights = {init.name for init in graph.initializer if len(init.dims) == 2}
    float_weight_matmuls = [n for n in graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    assert float_weight_matmuls == []


def test_one_word_table_is_shipped_and_read_by_both_ends(export):
    # The lookup and the output layer read one int8 table (model_export/tied.py): one copy in the file, and the
    # parameter count is the model's own, each shared parameter counted once.
    manifest = manifest_of(export)
    model = manifest["model"]
    assert model["tied_embeddings"] and model["word_tables"]["tables"] == 1
    graph = onnx.load(str(export / "model.onnx"), load_external_data=False).graph
    table = manifest["vocab_size"] * model["hidden_size"]
    tables = [init for init in graph.initializer if len(init.dims) == 2 and init.dims[0] * init.dims[1] == table]
    assert [(tuple(t.dims), t.data_type) for t in tables] == [((model["hidden_size"], manifest["vocab_size"]),
                                                                onnx.TensorProto.INT8)]
    readers = [node.op_type for node in graph.node if tables[0].name in node.input]
    assert sorted(readers) == ["Gather", "MatMulInteger"]


def test_real_model_is_the_pinned_qwen(real_export):
    manifest = manifest_of(real_export)
    model = manifest["model"]
    assert model["name"] == "Qwen2.5-Coder-0.5B-Instruct"  # not "... AWQ": the site ships int8 weights
    assert (model["architecture"], model["num_layers"], model["hidden_size"]) == ("qwen2", 24, 896)
    assert model["source_format"] == "GGUF Q4_K_M named 'Qwen2.5 Coder 0.5B Instruct AWQ', dequantised to float32"
    assert manifest["kv"]["num_kv_heads"] == 2 and manifest["kv"]["head_dim"] == 64
    # The official model's count (494 M), not 630 M with the word table counted twice.
    assert 493e6 < model["parameters"] < 495e6
    # Two copies of one table, quantised two ways (Q8_0 and Q5_0 in the GGUF): tied from the output table.
    tables = model["word_tables"]
    assert tables["tied_by"] == "the exporter, from the output table" and tables["row_cosine_min"] > 0.99


def test_real_model_fits_the_size_budget(real_export):
    manifest = manifest_of(real_export)
    size = next(f["size"] for f in manifest["files"] if f["name"] == manifest["graph"])
    assert size <= 520 * 1000 * 1000
