"""The exporter's contract: checked sources, clear errors, and byte-identical rebuilds."""

import json
import subprocess
import sys

import pytest

from model_export.build import build
from model_export.cache import prune, sha256_file
from model_export.sources import SourceError, check_gguf_metadata, resolve

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


@pytest.mark.parametrize("source, message", [
    ("missing-file.gguf", "GGUF file not found"),
    ("/nonexistent/folder/or/model", "cannot load"),
])
def test_cli_fails_clearly_on_a_bad_source(source, message):
    result = subprocess.run([sys.executable, "-m", "model_export", "--source", source],
                            capture_output=True, text=True, env={"HF_HUB_OFFLINE": "1", "PATH": ""})
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_tiny_rebuild_is_byte_identical(tiny_export, tmp_path, monkeypatch):
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path))
    monkeypatch.setattr("model_export.sources.fetch_default_gguf", _cached_gguf())
    monkeypatch.setattr("model_export.tiny.fetch_default_gguf", _cached_gguf())
    rebuilt = build("tiny", log=lambda message: None)
    assert rebuilt != tiny_export
    for name in ("model.onnx", "tokenizer.json", "manifest.json"):
        assert sha256_file(rebuilt / name) == sha256_file(tiny_export / name), name


def _cached_gguf():
    from model_export.sources import fetch_default_gguf
    path = fetch_default_gguf()
    return lambda: path


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
