"""The export pipeline, cached: source -> one word table -> float32 ONNX -> exact attention -> int8 -> outputs -> manifest.

An export lands in ``<cache>/models/<source>-<key>/``:

    model.ort, tokenizer.json, manifest.json     what the site serves (model.ort: the
                                                 graph every runtime loads, ort_format.py)
    model.onnx                                   the same graph as ONNX, for inspection
    reference/model_fp32.onnx(.data)             the float32 graph with the same
                                                 attention and word table, for quality checks
"""

import fcntl
import os
import shutil
from contextlib import contextmanager
from pathlib import Path

import onnx

from .attention import fix_attention
from .calibration import activation_peaks
from .cache import cache_root, export_key
from .manifest import write_manifest
from .ort_format import MODEL_FILE, save_ort
from .outputs import add_prediction_outputs, slice_prediction_rows
from .quantize import quantize_int8_per_row
from .sources import Source, resolve
from .tied import tie_word_tables
from .tokenizer import save_tokenizer_json

OPSET = 18
SERVED_FILES = [MODEL_FILE, "tokenizer.json"]
REFERENCE = "reference/model_fp32.onnx"


def export_dir(source: Source) -> Path:
    return cache_root() / "models" / f"{source.slug()}-{export_key(source.identity())}"


def build(spec: str, force: bool = False, log=print) -> Path:
    """Export ``spec`` (unless already cached) and return the export's folder."""
    if _offline_source(spec):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
    source = resolve(spec)
    target = export_dir(source)
    if (target / "manifest.json").is_file() and not force:
        return target
    with _exclusive(target):
        if (target / "manifest.json").is_file() and not force:
            return target
        _export(source, target, log)
    return target


@contextmanager
def _exclusive(target: Path):
    """One build per export at a time, even across processes (tests and CLI may race)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _export(source: Source, target: Path, log) -> None:
    work = target.with_name(target.name + ".partial")
    shutil.rmtree(work, ignore_errors=True)
    (work / "reference").mkdir(parents=True)

    log(f"loading {source.spec} ...")
    loaded = source.load()
    tables = tie_word_tables(loaded.model)
    log(f"word tables: {tables}")
    peaks = activation_peaks(loaded.model, loaded.tokenizer)
    log("exporting float32 ONNX with optimum ...")
    model = _export_float32(loaded.model, work / "optimum")
    layers = fix_attention(model)
    if layers != loaded.model.config.num_hidden_layers:
        raise RuntimeError(f"found {layers} attention blocks, expected {loaded.model.config.num_hidden_layers}")
    # Saving as external data empties the tensors it writes, so save a copy.
    reference = onnx.ModelProto()
    reference.CopyFrom(model)
    onnx.save(reference, str(work / REFERENCE), save_as_external_data=True, location="model_fp32.onnx.data")
    del reference
    slice_prediction_rows(model)
    log("quantising ...")
    counts = quantize_int8_per_row(model, peaks)
    if counts["embedding"] != 1 or counts["smoothed_inputs"] == 0 or counts["shared_tables"] != 2 - tables["tables"]:
        raise RuntimeError(f"unexpected quantisation: {counts}")
    add_prediction_outputs(model)
    onnx.checker.check_model(model)
    onnx.save(model, str(work / "model.onnx"))
    log("saving the ORT-format file ...")
    save_ort(work / "model.onnx", work / MODEL_FILE)
    save_tokenizer_json(loaded.tokenizer, work / "tokenizer.json")
    write_manifest(work, loaded, SERVED_FILES, MODEL_FILE, OPSET, counts, tables)
    shutil.rmtree(work / "optimum")
    shutil.rmtree(target, ignore_errors=True)
    work.rename(target)
    log(f"export written to {target}")


def _offline_source(spec: str) -> bool:
    """The pinned and tiny sources never need the hub; a bare id might."""
    return spec in ("default", "tiny") or spec.endswith(".gguf") or Path(spec).is_dir()


def _export_float32(model, folder: Path) -> onnx.ModelProto:
    import torch
    from optimum.exporters.onnx import onnx_export_from_model

    with torch.no_grad():
        onnx_export_from_model(model, output=folder, task="text-generation-with-past", opset=OPSET,
                               do_validation=False, no_post_process=True)
    return onnx.load(str(folder / "model.onnx"), load_external_data=True)
