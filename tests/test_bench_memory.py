"""benchmarks/memory.py: the sampler counts a worker's WASM memory, which per-page heap metrics miss.

The oracle: a page whose dedicated worker grows a WebAssembly memory by 256 MB
and touches every page of it; the tab's peak footprint must include them.
"""

import json

from benchmarks.memory import MemorySampler, peaks
from tests.browser import Server

pytest_plugins = ["tests.browser"]

GROW_MB = 256
PAGE = """<!doctype html><title>memory</title><script>
const source = `onmessage = (e) => { const memory = new WebAssembly.Memory({initial: 0, maximum: 65536});
  memory.grow(e.data); new Uint8Array(memory.buffer).fill(1); self.kept = memory; postMessage(memory.buffer.byteLength); };`;
const worker = new Worker(URL.createObjectURL(new Blob([source])));
window.grow = (pages) => new Promise((resolve) => { worker.onmessage = (e) => resolve(e.data); worker.postMessage(pages); });
</script>"""


def test_peaks_reads_renderers_and_totals():
    def dump(ts, pid, footprint_mb, rss_mb):
        totals = {"private_footprint_bytes": hex(footprint_mb << 20)[2:], "peak_resident_set_size": hex(rss_mb << 20)[2:]}
        return json.dumps({"ph": "v", "ts": ts, "pid": pid, "args": {"dumps": {"process_totals": totals}}}) + ","

    lines = ['{"traceEvents":[',
             json.dumps({"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "Browser"}}) + ",",
             json.dumps({"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "Renderer"}}) + ",",
             dump(10, 1, 50, 60), dump(10, 2, 20, 30), dump(10, 3, 300, 310),
             dump(20, 1, 55, 60), dump(20, 2, 20, 30), dump(20, 3, 500, 700), "]}"]
    # Process 3 is a renderer the trace does not name (it started after the trace began).
    assert peaks(lines, {3}) == {"peak_memory_mb": 500, "peak_rss_mb": 700, "all_processes_peak_mb": 575, "samples": 2}


def test_sampler_counts_a_workers_wasm_memory(chromium, tmp_path):
    (tmp_path / "index.html").write_text(PAGE)
    server = Server(tmp_path, isolation=False)
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(server.url)
        with MemorySampler(chromium) as sampler:
            assert page.evaluate("(pages) => window.grow(pages)", GROW_MB * 16) == GROW_MB << 20
    finally:
        context.close()
        server.stop()
    assert sampler.figures["peak_memory_mb"] >= GROW_MB
    assert sampler.figures["peak_rss_mb"] >= GROW_MB
