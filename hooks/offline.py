"""MkDocs build hook: the service worker that makes the built site work offline.

After every other hook has written its files, this copies Workbox's runtime
(pinned in package.json) to ``site/vendor/workbox/`` and runs Workbox's
``injectManifest`` (``hooks/offline.mjs``) over the template ``hooks/sw.js``,
which lists every file of the build with a revision hash into ``site/sw.js``.
The worker's caches are named after a hash of that file, so a new build gets
new caches and the old ones are deleted once it takes over. Not precached: the
model's chunks (the loader caches them, after the reader agrees to the
download), the large runtimes and files only hosts read. The runtimes' files are
listed in the worker instead (``RUNTIME_FOLDERS``), and their contents are part of
the build's hash: the page asks the worker to keep them once the model has loaded.
"""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from hooks.headers import ISOLATION

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
TEMPLATE = Path(__file__).with_name("sw.js")
BUILD_PLACEHOLDER = "__ONEPASS_BUILD__"
ISOLATION_PLACEHOLDER = "__ONEPASS_ISOLATION__"
RUNTIME_PLACEHOLDER = "__ONEPASS_RUNTIME_FILES__"
# Pyodide and onnxruntime-web (tens of MB) and zstd's decoder: fetched only once the reader has agreed to the model's
# download.
RUNTIME_FOLDERS = ["vendor/pyodide", "vendor/ort", "vendor/zstd"]
# What hooks/sw.js's importScripts and the page's offline.js load: Workbox's production builds.
WORKBOX_FILES = {
    "workbox-sw": ["workbox-sw.js"],
    "workbox-core": ["workbox-core.prod.js"],
    "workbox-precaching": ["workbox-precaching.prod.js"],
    "workbox-routing": ["workbox-routing.prod.js"],
    "workbox-strategies": ["workbox-strategies.prod.js"],
    "workbox-window": ["workbox-window.prod.mjs"],
}
# KaTeX lists each font as woff2 first, which every browser that runs this site reads; the older formats stay
# on the server, unlisted.
NOT_PRECACHED = ["sw.js", "_headers", "model/chunks/**", *(f"{folder}/**" for folder in RUNTIME_FOLDERS),
                 "vendor/katex/fonts/*.woff", "vendor/katex/fonts/*.ttf"]


def copy_workbox(site: Path) -> None:
    target = site / "vendor" / "workbox"
    target.mkdir(parents=True, exist_ok=True)
    for package, names in WORKBOX_FILES.items():
        for name in names:
            source = NODE_MODULES / package / "build" / name
            if not source.is_file():
                raise RuntimeError(f"{source} is missing: run `make setup` (npm ci) first")
            shutil.copy2(source, target / name)


def runtime_files(site: Path) -> tuple[list[dict], str]:
    """The runtimes' files, site-relative with their sizes, and a hash of their contents."""
    files, digest = [], hashlib.sha256()
    for path in sorted(p for folder in RUNTIME_FOLDERS for p in (site / folder).rglob("*") if p.is_file()):
        url = path.relative_to(site).as_posix()
        files.append({"url": url, "size": path.stat().st_size})
        digest.update(url.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return files, digest.hexdigest()


def write_service_worker(site: Path) -> dict:
    done = subprocess.run(["node", str(ROOT / "hooks" / "offline.mjs"), str(site), str(TEMPLATE), json.dumps(NOT_PRECACHED)],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"Workbox could not write the service worker:\n{done.stderr}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["warnings"]:
        raise RuntimeError(f"Workbox warned while listing the site: {report['warnings']}")
    worker = site / "sw.js"
    files, contents = runtime_files(site)
    text = (worker.read_text().replace(ISOLATION_PLACEHOLDER, json.dumps(ISOLATION))
            .replace(RUNTIME_PLACEHOLDER, json.dumps(files)))
    # The precache list revisions every other file; the runtimes' contents join the hash here.
    build = hashlib.sha256(text.encode() + contents.encode()).hexdigest()[:16]
    worker.write_text(text.replace(BUILD_PLACEHOLDER, build))
    return {**report, "build": build}


def on_post_build(config):
    site = Path(config["site_dir"])
    copy_workbox(site)
    write_service_worker(site)
