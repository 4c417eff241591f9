"""MkDocs build hook: ship the pinned browser runtimes and the ``onepass`` wheel with the site.

Pyodide, onnxruntime-web, the tokenizer and the chart and maths libraries are
pinned once, in package.json (and package-lock.json); this copies only the
files the pages load from ``node_modules`` into ``site/vendor/`` (a name ending
in ``/`` is a whole folder, such as KaTeX's fonts). Workbox, for the service
worker, is copied by hooks/offline.py. The lesson's Python (``py/``) is built
into a wheel that the worker unpacks into Pyodide, so no Python is pasted into
JavaScript. Python is then started once here, in headless Chromium, with that
wheel, and saved as a memory snapshot (hooks/python_snapshot.py) that the
worker starts from in a fraction of the time. ``site/vendor/runtime.json`` tells the worker
the file names. Nothing is fetched from a CDN.
"""

import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
VENDORED = {
    "pyodide": ("pyodide", ["pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                            "pyodide-lock.json"]),
    "ort": ("onnxruntime-web", ["dist/ort.wasm.min.mjs", "dist/ort-wasm-simd-threaded.mjs",
                                "dist/ort-wasm-simd-threaded.wasm"]),
    "tokenizers": ("@huggingface/tokenizers", ["dist/tokenizers.min.mjs"]),
    "chartjs": ("chart.js", ["dist/chart.umd.min.js"]),
    "katex": ("katex", ["dist/katex.min.js", "dist/katex.min.css", "dist/fonts/"]),
}
# zstd's decoder, for the model's chunks (runtime/zstd.js): the zstddec package's streaming build carries its
# WebAssembly module inline, as base64, and fetches it as a data: URL, which the site's policy refuses (connect-src
# 'self'); the build writes it out as a file of the site instead.
ZSTD = ("zstddec", "dist/zstddec-stream.mjs", "vendor/zstd/zstd.wasm")
# Imported into the snapshot, so the worker's first imports of them are free: the modules worker.js imports.
SNAPSHOT_IMPORTS = ["onepass.backends.browser", "onepass.entry"]


def _version(package: str) -> str:
    return json.loads((NODE_MODULES / package / "package.json").read_text())["version"]


def _copy(package: str, names: list[str], target: Path) -> None:
    if not (NODE_MODULES / package).is_dir():
        raise RuntimeError(f"node_modules/{package} is missing: run `make setup` (npm ci) first")
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        source = NODE_MODULES / package / name
        if name.endswith("/"):
            shutil.copytree(source, target / source.name, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target / source.name)


def copy_runtimes(site: Path) -> dict:
    versions = {}
    for folder, (package, names) in VENDORED.items():
        _copy(package, names, site / "vendor" / folder)
        versions[package] = _version(package)
    versions[ZSTD[0]] = zstd_module(site)
    return versions


def zstd_module(site: Path) -> str:
    """Write zstddec's WebAssembly module into the site (``ZSTD``); return the package's version."""
    package, name, target = ZSTD
    source = NODE_MODULES / package / name
    if not source.is_file():
        raise RuntimeError(f"node_modules/{package} is missing: run `make setup` (npm ci) first")
    found = re.search(r'const wasm = "([A-Za-z0-9+/=]+)"', source.read_text())
    module = base64.b64decode(found.group(1)) if found else b""
    if not module.startswith(b"\0asm"):
        raise RuntimeError(f"{source} no longer carries its WebAssembly module as before: look at runtime/zstd.js")
    (site / target).parent.mkdir(parents=True, exist_ok=True)
    (site / target).write_bytes(module)
    return _version(package)


def build_wheel(vendor: Path) -> str:
    """Build ``py/`` into a wheel in ``vendor``; work on a copy so the source tree gets no build files."""
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "py"
        shutil.copytree(ROOT / "py", source, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--wheel-dir", str(vendor), str(source)], check=True, capture_output=True)
    wheels = sorted(vendor.glob("onepass-*.whl"))
    if len(wheels) != 1:
        raise RuntimeError(f"expected one onepass wheel in {vendor}, found {[w.name for w in wheels]}")
    return wheels[0].name


def python_snapshot(vendor: Path, wheel: str) -> dict | None:
    """Python started once with the wheel and saved in ``vendor/pyodide/`` (hooks/python_snapshot.py), or None.

    Its name is its content's sha256, so a browser never pairs an old snapshot with a new wheel (the service
    worker also caches vendor/pyodide/ per build). Without Chromium there is none: the worker starts plainly.
    """
    from hooks import python_snapshot

    if not python_snapshot.available():
        print("hooks/vendor.py: no Chromium, so no Python snapshot: the site's Python starts plainly", file=sys.stderr)
        return None
    made = python_snapshot.make(vendor / "pyodide", vendor / wheel, SNAPSHOT_IMPORTS, vendor / "pyodide")
    return {"name": f"pyodide/{made['name']}", "jspi": made["jspi"]}


def on_post_build(config):
    vendor = Path(config["site_dir"]) / "vendor"
    shutil.rmtree(vendor, ignore_errors=True)
    vendor.mkdir(parents=True)
    runtime = {"versions": copy_runtimes(Path(config["site_dir"])), "wheel": build_wheel(vendor)}
    snapshot = python_snapshot(vendor, runtime["wheel"])
    if snapshot:
        runtime["snapshot"] = snapshot
    (vendor / "runtime.json").write_text(json.dumps(runtime, indent=2) + "\n")
