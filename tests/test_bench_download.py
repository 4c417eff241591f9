"""benchmarks/bench_browser.py's download figures: what the site's manifest says goes over the wire, and the
baseline served as today's build serves it (uncompressed chunks; tests/test_browser_loading.py's uncompressed host loads
that very site), and the baseline served by the runtime of another revision."""

import hashlib
import json
import shutil
import subprocess

from benchmarks.bench_browser import ROOT, download_figures, runtime_at, runtime_files, served_uncompressed
from hooks.model import ZSTD_MAGIC, decompress, served_files
from tests.browser import Server, load_runtime, offline_page

pytest_plugins = ["tests.browser"]


def test_the_download_is_the_compressed_chunks_and_the_baseline_serves_them_plain(tiny_site, tmp_path):
    figures = download_figures(tiny_site)
    manifest = json.loads((tiny_site / "model" / "manifest.json").read_text())
    on_disk = sum((tiny_site / "model" / c["name"]).stat().st_size for f in served_files(manifest) for c in f["chunks"])
    assert figures["download_mb"] == round(on_disk / 1e6, 1) < figures["stored_mb"]

    site = tmp_path / "site"
    shutil.copytree(tiny_site, site)
    served_uncompressed(site)
    plain = json.loads((site / "model" / "manifest.json").read_text())
    for entry in plain["files"]:
        for chunk in entry["chunks"]:
            data = (site / "model" / chunk["name"]).read_bytes()
            assert data[:4] != ZSTD_MAGIC and hashlib.sha256(data).hexdigest() == chunk["sha256"]
    assert download_figures(site)["download_mb"] == figures["stored_mb"]
    assert decompress((tiny_site / "model" / manifest["files"][0]["chunks"][0]["name"]).read_bytes()) == \
        (site / "model" / manifest["files"][0]["chunks"][0]["name"]).read_bytes()


def test_the_baseline_runtime_is_the_one_at_its_revision_and_still_loads(tiny_site, tmp_path, chromium):
    site = tmp_path / "site"
    shutil.copytree(tiny_site, site)
    runtime = site / "assets" / "onepass" / "runtime"
    (runtime / "harness.js").write_text("a changed runtime")
    runtime_at(site, "HEAD")
    folder, names = runtime_files("HEAD")
    assert "harness.js" in names
    for name in names:
        shown = subprocess.run(["git", "show", f"HEAD:{folder}/{name}"], cwd=ROOT, capture_output=True, check=True).stdout
        assert (runtime / name).read_bytes() == shown
    # A runtime that reads no zstd gets the chunks as its builds served them.
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    chunk = served_files(manifest)[0]["chunks"][0]
    assert ("zstd.js" in names) != ((site / "model" / chunk["name"]).read_bytes()[:2] == b"\x1f\x8b")
    server = Server(site)
    context, page, outside = offline_page(chromium, service_workers="block")
    try:
        assert load_runtime(page, server.url)["modelFromHeap"] is True
    finally:
        context.close()
        server.stop()
    assert outside == []
