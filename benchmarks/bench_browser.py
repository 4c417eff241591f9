"""The browser runtime's speed in headless Chromium, against native onnxruntime on the same files.

    .venv/bin/python benchmarks/bench_browser.py [--source default]     (or: make bench-browser)

Builds the site with the export into a temporary folder, serves it on
localhost (with the cross-origin-isolation headers) and measures:

* cold load to the first pass (an empty profile) and warm load (the model from
  the browser's store, OPFS), medians of WARM_LOADS, with every phase the
  worker times (onnxruntime-web's start, the model's bytes, session creation,
  tokenizer, Pyodide and how long the load waited for it), and the load call alone (`load_call_s`: from
  `window.onepass().load()` to a model ready to run, the span the peers' load
  times, without the page's navigation or a first pass). Like the peers, ours runs in a persistent
  profile in a temporary folder, as a returning reader's browser keeps its
  storage on disk (an incognito context keeps it in memory);
* decode-1 / verify-6 / prefill-30 (predicting from its last row) with 1 and 2
  threads, timed in the worker around onnxruntime-web alone by the same
  harness (docs/assets/onepass/runtime/harness.js) as the Node checks, the same passes
  natively, their ratios, and the bridge's cost per pass (Python to
  JavaScript and back, with the conversions);
* step 5's three examples as its panel runs them (2 threads, the page's
  default): one token per pass against prompt lookup, wall time around the
  whole request, medians of EXAMPLE_RUNS, and whether the texts are identical;
* a first visit in two tabs opened together: each tab's load call, and how many
  chunk requests the site was sent (the model's chunks once each, not twice).

Prints one JSON object of figures; asserts nothing. Measure on a quiet machine.
"""

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "py")]

from benchmarks.memory import MemorySampler  # noqa: E402
from benchmarks.peers import held_ids, peer_figures  # noqa: E402
from model_export.build import build  # noqa: E402
from model_export.check import load, speed  # noqa: E402
from onepass.examples import EXAMPLES  # noqa: E402
from tools.site import CHROMIUM, CHROMIUM_ARGS, Server, build_site  # noqa: E402

THREADS = (1, 2)
WARM_LOADS = 3
EXAMPLE_RUNS = 3
LOAD_TIMEOUT_MS = 600_000
PASS_KEYS = ("decode_1_ms", "verify_6_ms", "prefill_30_ms")


def open_runtime(context, url: str, threads: int | None = None) -> tuple[object, dict, float]:
    """A page with the model loaded; returns the page, the worker's load info (with `load_call_s`, the load
    call alone, timed in the page) and the wall seconds from the navigation."""
    page = context.new_page()
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    began = time.perf_counter()
    # The home page has no panel, so nothing loads the model before this call chooses the threads.
    page.goto(url)
    page.wait_for_function("() => window.onepass !== undefined")
    info = page.evaluate("""async (threads) => {
        const began = performance.now();
        const info = await window.onepass().load(null, threads);
        return { ...info, load_call_s: (performance.now() - began) / 1000 };
    }""", threads)
    return page, info, time.perf_counter() - began


def first_pass(page) -> None:
    page.evaluate("() => window.onepass().generate({text: 'Hello', maxNew: 1})")


def seconds(timings: dict) -> dict:
    return {k: round(v, 2) for k, v in timings.items()}


def warm_load(context, url: str, threads: int) -> tuple[object, float, dict]:
    """A page loaded from the Cache API and through its first pass: the page, the wall seconds, the phases."""
    began = time.perf_counter()
    page, info, _ = open_runtime(context, url, threads)
    passed = time.perf_counter()
    first_pass(page)
    return page, time.perf_counter() - began, {**info["timings"], "load_call": info["load_call_s"],
                                               "first_pass": time.perf_counter() - passed}


def example_race(page) -> dict:
    """Step 5's examples, one token per pass against prompt lookup: wall seconds (medians) and their ratio."""
    race = {}
    for example in (e.as_dict() for e in EXAMPLES):
        times = {"greedy": [], "lookup": []}
        texts = {}
        for _ in range(EXAMPLE_RUNS):
            for mode in times:
                run = page.evaluate("""async ([text, mode, maxNew]) => {
                    const began = performance.now();
                    const run = await window.onepass().generate({text, mode, maxNew});
                    return {seconds: (performance.now() - began) / 1000, text: run.text, passes: run.passes.length};
                }""", [example["prompt"], mode, example["max_new"]])
                times[mode].append(run["seconds"])
                texts[mode] = (run["text"], run["passes"])
        greedy, lookup = statistics.median(times["greedy"]), statistics.median(times["lookup"])
        race[example["key"]] = {"greedy_s": round(greedy, 2), "lookup_s": round(lookup, 2),
                                "speedup": round(greedy / lookup, 2), "identical": texts["greedy"][0] == texts["lookup"][0],
                                "passes": {mode: passes for mode, (_, passes) in texts.items()}}
    return race


def two_tabs(playwright, url: str) -> dict:
    """A first visit in two tabs opened together (a fresh profile), both loading the model at once: each tab's load
    call and the chunk requests the site was sent (each chunk once, where the tabs take turns on it: loader.js)."""
    with tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        asked = []
        context.on("request", lambda request: "/model/chunks/" in request.url and asked.append(request.url))
        pages = [context.new_page() for _ in range(2)]
        for page in pages:
            page.set_default_timeout(LOAD_TIMEOUT_MS)
            page.goto(url)
            page.wait_for_function("() => window.onepass !== undefined")
        for page in pages:
            page.evaluate("""() => {
                const began = performance.now();
                window.loadCall = window.onepass().load().then(() => (performance.now() - began) / 1000);
            }""")
        loads = [round(page.evaluate("window.loadCall"), 2) for page in pages]
        context.close()
    return {"load_call_s": loads, "chunk_requests": len(asked), "chunks": len(set(asked))}


def browser_figures(url: str, ids: list[int]) -> dict:
    figures = {}
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        browser = context.browser
        with MemorySampler(browser) as load:
            began = time.perf_counter()
            page, info, _ = open_runtime(context, url)
            passed = time.perf_counter()
            first_pass(page)
            info["timings"].update(load_call=info["load_call_s"], first_pass=time.perf_counter() - passed)
            figures["cold_load_to_first_pass_s"] = round(time.perf_counter() - began, 2)
        with MemorySampler(browser) as run:
            page.evaluate("() => window.onepass().generate({text: 'Hello', maxNew: 16})")
        figures["memory"] = {"load": load.figures, "run": run.figures}
        figures["cold_timings_s"] = seconds(info["timings"])
        figures["versions"] = info["versions"]
        figures["cross_origin_isolated"] = info["crossOriginIsolated"]
        figures["python_from_snapshot"] = info["pythonSnapshot"]  # hooks/vendor.py's snapshot, or a plain start
        page.close()
        loads = []
        for _ in range(WARM_LOADS):
            page, wall, timings = warm_load(context, url, THREADS[-1])
            loads.append((wall, timings))
            page.close()
        wall, timings = sorted(loads, key=lambda load: load[0])[len(loads) // 2]
        figures["warm_load_to_first_pass_s"] = round(wall, 2)
        figures["warm_load_to_first_pass_all_s"] = [round(load[0], 2) for load in loads]
        figures["warm_timings_s"] = seconds(timings)
        figures["warm_load_call_s"] = round(statistics.median(load[1]["load_call"] for load in loads), 2)
        for threads in THREADS:
            page, _, _ = warm_load(context, url, threads)
            bench = page.evaluate("(ids) => window.onepass().bench({ids})", ids)
            figures[f"browser_{threads}t"] = {k: round(v, 2) if isinstance(v, float) else v for k, v in bench.items()}
            if threads == THREADS[-1]:
                figures["step5_examples"] = example_race(page)
            page.close()
        context.close()
        figures["two_tabs_first_visit"] = two_tabs(playwright, url)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="default")
    args = parser.parse_args()

    folder = build(args.source, log=lambda message: print(message, file=sys.stderr))
    held = held_ids(folder)
    figures = {"model": json.loads((folder / "manifest.json").read_text())["model"]["name"]}
    with tempfile.TemporaryDirectory() as scratch:
        site = build_site(folder, Path(scratch) / "site", chunk_mb="50")
        server = Server(site)
        try:
            figures.update(browser_figures(server.url, held[:64]))
        finally:
            server.stop()
    for threads in THREADS:
        native = speed(load(folder, threads), held[:64])
        figures[f"native_{threads}t"] = native
        browser = figures[f"browser_{threads}t"]
        figures[f"ratio_{threads}t"] = {key: round(browser[key] / native[key], 2)
                                        for key in PASS_KEYS if native.get(key) and key in browser}
    figures["browser_2t_speedup_over_1t"] = {key: round(figures["browser_1t"][key] / figures["browser_2t"][key], 2)
                                             for key in PASS_KEYS}
    figures["peers"] = peer_figures(folder, held[:64], log=lambda message: print(message, file=sys.stderr))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
