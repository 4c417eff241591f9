"""The tab's peak memory, from Chromium's own memory instrumentation (memory-infra) over the DevTools protocol.

Why not ``Performance.getMetrics``: it counts one page's JavaScript heap, and the
model's WASM memory lives in a dedicated worker, in the same renderer process but
outside that heap. memory-infra dumps the totals of every process instead: its
*private footprint* (what Chrome's task manager calls "Memory footprint": the
process's own resident and swapped memory, shared pages not counted) and its peak
resident set size (the kernel's, reset after each dump, so the peaks of all dumps
but the first, which reaches back before the window, cover the whole window and
not only the instants sampled). The sampler dumps once as it opens and once as
it closes, so even a window shorter than an interval has a peak RSS.

While a ``MemorySampler`` is open, Chromium dumps every process every
``INTERVAL_MS`` (``Tracing.start`` on a browser-wide CDP session, category
``disabled-by-default-memory-infra``, periodic dumps at the lightest "background"
level of detail); on exit it ends the trace and keeps the peaks::

    with MemorySampler(browser) as load:
        ...                              # open the page, load the model
    load.figures  # {"peak_memory_mb": ..., "peak_rss_mb": ..., "all_processes_peak_mb": ...}

The tab is the renderer with the largest footprint: a page's frames and its
workers share one renderer, and the other renderers (about:blank, DevTools' own)
stay small.
"""

import json
import time

INTERVAL_MS = 500
TRACE_CONFIG = {
    "includedCategories": ["disabled-by-default-memory-infra"],
    "excludedCategories": ["*"],
    "memoryDumpConfig": {"triggers": [{"mode": "background", "periodic_interval_ms": INTERVAL_MS}],
                         "allowedDumpModes": ["background"]},
}
END_TIMEOUT_S = 60
MB = 2 ** 20


class MemorySampler:
    """Peaks of the browser's processes between ``__enter__`` and ``__exit__`` (see the module's docstring)."""

    def __init__(self, browser):
        self.browser = browser
        self.figures: dict = {}

    def __enter__(self):
        self.cdp = self.browser.new_browser_cdp_session()
        self.complete: dict = {}
        self.cdp.on("Tracing.tracingComplete", lambda event: self.complete.update(event))
        self.began = time.perf_counter()
        self.cdp.send("Tracing.start", {"traceConfig": TRACE_CONFIG, "transferMode": "ReturnAsStream"})
        # The first periodic dump comes an interval after the start, so a short window could hold only the
        # last dump, whose peak RSS reaches back before it: dump at once, so the window has a first one.
        self._dump()
        return self

    def __exit__(self, *exc):
        seconds = time.perf_counter() - self.began
        try:
            # One last dump, so the peak RSS since the last periodic one is counted too.
            self._dump()
            # A renderer started after the trace began has no process_name in it: ask for the types too.
            processes = self.cdp.send("SystemInfo.getProcessInfo")["processInfo"]
            self.cdp.send("Tracing.end")
            renderers = {process["id"] for process in processes if process["type"] == "renderer"}
            self.figures = {**peaks(self._trace_lines(), renderers), "seconds": round(seconds, 1)}
        finally:
            self.cdp.detach()
        return False

    def _dump(self):
        self.cdp.send("Tracing.requestMemoryDump", {"deterministic": False, "levelOfDetail": "background"})

    def _trace_lines(self):
        deadline = time.monotonic() + END_TIMEOUT_S
        while not self.complete:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not finish the memory trace")
            # Playwright's sync API delivers events only while a call is waiting: ask something cheap.
            self.cdp.send("Browser.getVersion")
            time.sleep(0.05)
        handle = self.complete["stream"]
        rest = ""
        while True:
            chunk = self.cdp.send("IO.read", {"handle": handle, "size": 1 << 20})
            lines = (rest + chunk["data"]).split("\n")
            rest = lines.pop()
            yield from lines
            if chunk.get("eof"):
                break
        self.cdp.send("IO.close", {"handle": handle})
        yield rest


def peaks(lines, renderers: set[int] = frozenset()) -> dict:
    """The peaks in a memory-infra trace whose events come one per line (as Chromium writes them).

    ``renderers`` adds the ids of renderer processes the trace may not name.
    """
    kinds, dumps = {}, []
    for line in lines:
        if '"process_name"' in line or '"process_totals"' in line:
            event = json.loads(line.strip().rstrip(","))
            if event.get("name") == "process_name":
                kinds[event["pid"]] = event["args"]["name"]
            elif event.get("ph") == "v":
                totals = event["args"]["dumps"]["process_totals"]
                dumps.append((event["ts"], event["pid"], int(totals.get("private_footprint_bytes", "0"), 16),
                              int(totals.get("peak_resident_set_size", "0"), 16)))
    renderers = [dump for dump in dumps if kinds.get(dump[1]) == "Renderer" or dump[1] in renderers]
    if not renderers:
        return {"error": "no renderer in the memory trace", "dumps": len(dumps)}
    by_time: dict[int, int] = {}
    for ts, _, footprint, _ in dumps:
        by_time[ts] = by_time.get(ts, 0) + footprint
    tab = max(renderers, key=lambda dump: dump[2])[1]
    # The first dump's peak RSS is the peak since the dump before the window (another sampler's, or none).
    first = min(by_time)
    rss = [dump[3] for dump in renderers if dump[1] == tab and dump[0] != first]
    return {
        "peak_memory_mb": round(max(dump[2] for dump in renderers if dump[1] == tab) / MB),
        "peak_rss_mb": round(max(rss) / MB) if rss else None,
        "all_processes_peak_mb": round(max(by_time.values()) / MB),
        "samples": len({dump[0] for dump in renderers}),
    }
