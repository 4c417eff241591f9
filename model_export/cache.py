"""Where heavy artefacts live: outside the clone, keyed so a rebuild is never stale.

``ONEPASS_CACHE`` overrides the default ``~/.cache/onepass``. An export's key
hashes the source, the exporter's own code and the versions of the libraries
that shape the graph, so editing the exporter or bumping onnx yields a new
folder instead of silently reusing an old model.
"""

import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import shutil
from pathlib import Path

from . import EXPORTER_VERSION

# The modules whose code decides the bytes of an export (not the checks or the CLI).
_EXPORT_MODULES = (
    "attention.py", "build.py", "calibration.py", "calibration.txt", "default_gguf.py", "graph.py", "loaded.py",
    "manifest.py", "ort_format.py", "outputs.py", "quantize.py", "sources.py", "tied.py", "tiny.py",
    "tokenizer.py",
)
_EXPORT_LIBRARIES = ("torch", "transformers", "optimum", "optimum-onnx", "onnx", "onnxruntime", "gguf", "tokenizers",
                     "numpy")


def cache_root() -> Path:
    return Path(os.environ.get("ONEPASS_CACHE", Path.home() / ".cache" / "onepass"))


def library_versions() -> dict:
    return {name: importlib.metadata.version(name) for name in _EXPORT_LIBRARIES}


def exporter_fingerprint() -> str:
    here = Path(__file__).parent
    digest = hashlib.sha256(EXPORTER_VERSION.encode())
    for name in _EXPORT_MODULES:
        digest.update(name.encode() + b"\0" + (here / name).read_bytes())
    digest.update(json.dumps(library_versions(), sort_keys=True).encode())
    return digest.hexdigest()


KEY_LENGTH = 16  # hex digits of an export's key in its folder name


def export_key(source_identity: dict) -> str:
    payload = json.dumps({"source": source_identity, "exporter": exporter_fingerprint()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:KEY_LENGTH]


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prune(keep: Path, log=print) -> list[Path]:
    """Delete the other exports of ``keep``'s source (older exporter code, unfinished builds); return them.

    An export whose lock another process holds (a build in progress) is left alone.
    """
    slug, _ = keep.name.rsplit("-", 1)
    same_source = re.compile(rf"{re.escape(slug)}-[0-9a-f]{{{KEY_LENGTH}}}(\.partial)?")
    removed = []
    for old in sorted(keep.parent.iterdir()):
        if not old.is_dir() or old == keep or not same_source.fullmatch(old.name):
            continue
        with open(keep.parent / (old.name.removesuffix(".partial") + ".lock"), "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            shutil.rmtree(old, ignore_errors=True)
        log(f"pruned {old}")
        removed.append(old)
    return removed
