"""``manifest.json``: everything the browser and Python need to know about an export.

Nothing about the model is hard-coded elsewhere: file names, sizes and hashes,
vocabulary, special and end-of-text ids, the KV-cache layout and the outputs
all come from here.
"""

import hashlib
import json
from importlib.metadata import version
from pathlib import Path

from . import EXPORTER_VERSION
from .cache import exporter_fingerprint, library_versions, sha256_file
from .outputs import FIRST_ROW, OUTPUTS, TOP_K
from .quantize import RECIPE
from .tokenizer import end_of_text_ids, special_ids

MANIFEST_FORMAT = 1
# What the quality figures compare the int8 model with (check.quality, bench_export.py).
REFERENCE_IS = "the float32 export of the same model, its word tables tied as shipped (model.word_tables)"


def arithmetic_identity(folder: Path) -> str:
    """What the export computes, as one string: the sha256 of ``model.onnx`` with the onnxruntime that turned it
    into ``model.ort`` (``ort_format.py``), and the tokenizer's sha256. Not ``model.ort``'s own hash: onnxruntime
    writes the same graph in another byte order from another interpreter path (a clone in another folder), so
    its hash named one model many ways; ``model.onnx`` is the same bytes from any path and on any processor
    (``tests/test_exporter.py``; benchmarks/FINDINGS.md, "One export on every processor").
    A draft names the model it was trained for by it, and the site ties cached results and traces to it
    (``onepass.seam.target_identity``)."""
    graph = hashlib.sha256(f"{sha256_file(folder / 'model.onnx')} onnxruntime {version('onnxruntime')}".encode())
    return f"{graph.hexdigest()}:{sha256_file(folder / 'tokenizer.json')}"


def write_manifest(folder: Path, loaded, files: list[str], graph: str, opset: int, counts: dict, tables: dict) -> dict:
    """``graph``: which of ``files`` the runtimes load as the model; ``tables``: what ``tie_word_tables`` found."""
    config = loaded.model.config
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    manifest = {
        "format": MANIFEST_FORMAT,
        "model": {
            **loaded.meta,
            "architecture": config.model_type,
            "parameters": sum(p.numel() for p in loaded.model.parameters()),
            "num_layers": config.num_hidden_layers,
            "hidden_size": config.hidden_size,
            "num_attention_heads": config.num_attention_heads,
            "tied_embeddings": bool(config.tie_word_embeddings),
            "word_tables": tables,
        },
        "graph": graph,
        "files": [{"name": name, "size": (folder / name).stat().st_size, "sha256": sha256_file(folder / name)}
                  for name in files],
        "identity": arithmetic_identity(folder),
        "vocab_size": config.vocab_size,
        "special_ids": special_ids(loaded.tokenizer),
        "eos_ids": end_of_text_ids(loaded.tokenizer, loaded.model),
        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask", "position_ids": "position_ids",
                   "first_row": FIRST_ROW},
        "outputs": {**OUTPUTS, "top_k": TOP_K},
        "kv": {
            "num_layers": config.num_hidden_layers,
            "num_kv_heads": config.num_key_value_heads,
            "head_dim": head_dim,
            "dtype": "float32",
            "layout": "batch, kv_heads, sequence, head_dim",
            "input_key": "past_key_values.{i}.key",
            "input_value": "past_key_values.{i}.value",
            "output_key": "present.{i}.key",
            "output_value": "present.{i}.value",
        },
        "quantisation": {**RECIPE, "rewritten": counts, "reference": REFERENCE_IS},
        "exporter": {"version": EXPORTER_VERSION, "fingerprint": exporter_fingerprint(), "opset": opset,
                     "libraries": library_versions()},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest
