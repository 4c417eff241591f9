"""Where heavy artefacts live: outside the clone, keyed so a rebuild is never stale.

``ONEPASS_CACHE`` overrides the default ``~/.cache/onepass``. An export's key
hashes the source, the exporter's own code and the versions of the libraries
that shape the graph, so editing the exporter or bumping onnx yields a new
folder instead of silently reusing an old model.
"""

import ast
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
    "attention.py", "build.py", "calibration.py", "calibration.txt", "default_gguf.py", "gguf_fields.py", "graph.py",
    "loaded.py", "manifest.py", "ort_format.py", "outputs.py", "quantize.py", "sources.py", "tied.py", "tiny.py",
    "tokenizer.py",
)
_EXPORT_LIBRARIES = ("torch", "transformers", "optimum", "optimum-onnx", "onnx", "onnxruntime", "gguf", "tokenizers",
                     "numpy")


def cache_root() -> Path:
    return Path(os.environ.get("ONEPASS_CACHE", Path.home() / ".cache" / "onepass"))


def library_versions() -> dict:
    return {name: importlib.metadata.version(name) for name in _EXPORT_LIBRARIES}


def code_of(source: str) -> bytes:
    """What in a module's source can change what it does: its syntax tree without docstrings (comments are not in
    it), so a comment or a docstring edited re-keys neither an export (minutes) nor the draft's data and training."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree).encode()


def exporter_fingerprint() -> str:
    here = Path(__file__).parent
    digest = hashlib.sha256(EXPORTER_VERSION.encode())
    for name in _EXPORT_MODULES:
        path = here / name
        code = code_of(path.read_text(encoding="utf-8")) if path.suffix == ".py" else path.read_bytes()
        digest.update(name.encode() + b"\0" + code)
    digest.update(json.dumps(library_versions(), sort_keys=True).encode())
    return digest.hexdigest()


KEY_LENGTH = 16  # hex digits of an export's key in its folder name


def export_key(source_identity: dict) -> str:
    payload = json.dumps({"source": source_identity, "exporter": exporter_fingerprint()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:KEY_LENGTH]


def write_whole(path: Path, data: bytes) -> None:
    """``data`` at ``path``, written beside it first and renamed: a process reading ``path`` meanwhile (another build,
    another test worker) finds the old file or the whole new one, never a part."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_bytes(data)
    os.replace(partial, path)


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
