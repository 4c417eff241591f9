"""Python's start, made once at build time in headless Chromium and saved for the site's worker.

Pyodide can start from a memory snapshot of itself (about 0.3 s in Chromium, warm, against about 1.3 s for a
plain start on a 2-core machine). The snapshot holds what Pyodide found where it was made, such as whether
WebAssembly stack switching exists (Node 20 has none, so a snapshot made in Node breaks ``time.sleep`` in a
proposer), so it is made where the reader's Python runs: in a module worker in Chromium, cross-origin isolated
like the site (hooks/python_snapshot_worker.mjs). Called by hooks/vendor.py; without Chromium the site is built
without a snapshot and the worker starts Python plainly.
"""

import base64
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from hooks.headers import ISOLATION, format_rules
from model_export.cache import cache_root, sha256_file, write_whole
from tools.site import CHROMIUM, CHROMIUM_ARGS, Server

KEPT = 8  # snapshots kept in the cache
PAGE = '<!doctype html><meta charset="utf-8"><title>Python snapshot</title>'
# The page starts the worker and hands its gzipped snapshot back as base64 (one string over the DevTools protocol).
MAKE = """([wheel, modules]) => new Promise((resolve) => {
    const worker = new Worker('python_snapshot_worker.mjs', { type: 'module' });
    worker.onerror = (event) => resolve({ error: String(event.message) });
    worker.onmessage = ({ data }) => {
        if (data.error) return resolve(data);
        const reader = new FileReader();
        reader.onload = () => resolve({ base64: reader.result.split(',')[1], jspi: data.jspi });
        reader.readAsDataURL(new Blob([data.gzipped]));
    };
    worker.postMessage({ wheel, modules });
})"""


def available() -> bool:
    return os.access(CHROMIUM, os.X_OK)


def make(pyodide: Path, wheel: Path, modules: list[str], out_folder: Path) -> dict:
    """The snapshot, written to ``out_folder`` as ``python-<sha256 of the snapshot, 16>.snapshot.gz``.

    Returns ``{"name": file name, "jspi": whether the browser that made it had stack switching}``. Making it takes
    about 4.7 s of an 8 s build (benchmarks/FINDINGS.md, "The build's slow parts kept"), so it is kept in the cache
    (``<cache>/snapshots/``) under a key of everything it is made from: Pyodide's files, the wheel's contents, the
    modules, this code and Chromium's version.
    """
    kept = cache_root() / "snapshots" / f"python-{_key(pyodide, wheel, modules)}"
    found = _kept(kept)
    info, gzipped = found or _make(pyodide, wheel, modules)
    if not found:
        kept.parent.mkdir(parents=True, exist_ok=True)
        write_whole(kept.with_suffix(".snapshot.gz"), gzipped)
        write_whole(kept.with_suffix(".json"), json.dumps(info).encode())
        # Each change to py/ makes another (6 MB): the most recently made or used are kept.
        for old in sorted(kept.parent.glob("python-*.json"), key=lambda path: path.stat().st_mtime)[:-KEPT]:
            for suffix in (".json", ".snapshot.gz"):
                old.with_suffix(suffix).unlink(missing_ok=True)
    else:
        os.utime(kept.with_suffix(".json"))
    (out_folder / info["name"]).write_bytes(gzipped)
    return info


def _kept(kept: Path) -> tuple[dict, bytes] | None:
    """The kept snapshot and what it says of itself, if whole (it decompresses to the bytes its name hashes)."""
    try:
        info = json.loads(kept.with_suffix(".json").read_text())
        gzipped = kept.with_suffix(".snapshot.gz").read_bytes()
        if hashlib.sha256(gzip.decompress(gzipped)).hexdigest()[:16] == info["name"][7:23]:
            return info, gzipped
    except (OSError, ValueError, KeyError, EOFError):  # gzip's BadGzipFile is an OSError
        pass
    return None


def _key(pyodide: Path, wheel: Path, modules: list[str]) -> str:
    digest = hashlib.sha256(json.dumps(modules).encode())
    for path in sorted(pyodide.iterdir()):
        if path.is_file():
            digest.update(path.name.encode() + bytes.fromhex(sha256_file(path)))
    with zipfile.ZipFile(wheel) as files:  # its contents, not its bytes: a zip's bytes hold times
        for name in sorted(files.namelist()):
            digest.update(name.encode() + hashlib.sha256(files.read(name)).digest())
    for source in (Path(__file__), Path(__file__).with_name("python_snapshot_worker.mjs")):
        digest.update(source.read_bytes())
    digest.update(subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True).stdout.encode())
    return digest.hexdigest()[:16]


def _make(pyodide: Path, wheel: Path, modules: list[str]) -> tuple[dict, bytes]:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "index.html").write_text(PAGE)
        (folder / "_headers").write_text(format_rules([("/*", ISOLATION)]))
        shutil.copy(Path(__file__).with_name("python_snapshot_worker.mjs"), folder)
        shutil.copy(wheel, folder / wheel.name)
        (folder / "pyodide").symlink_to(pyodide.resolve())
        server = Server(folder)
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page()
                    page.goto(server.url)
                    made = page.evaluate(MAKE, [wheel.name, modules])
                finally:
                    browser.close()
        finally:
            server.stop()
    if "error" in made:
        raise RuntimeError(f"making Python's snapshot in Chromium failed: {made['error']}")
    gzipped = base64.b64decode(made["base64"])
    name = f"python-{hashlib.sha256(gzip.decompress(gzipped)).hexdigest()[:16]}.snapshot.gz"
    return {"name": name, "jspi": made["jspi"]}, gzipped
