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
import os
import shutil
import tempfile
from pathlib import Path

from hooks.headers import ISOLATION, format_rules
from tools.site import CHROMIUM, CHROMIUM_ARGS, Server

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

    Returns ``{"name": file name, "jspi": whether the browser that made it had stack switching}``.
    """
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
    (out_folder / name).write_bytes(gzipped)
    return {"name": name, "jspi": made["jspi"]}
