"""The browser runtime's speed in headless Chromium, against native onnxruntime on the same files.

    .venv/bin/python -m benchmarks.bench_browser [--source default] [--baseline EXPORT] [--loads-only] [--passes-only]
                                                                         (or: make bench-browser)

Builds the site with the export into a temporary folder, serves it on
localhost (with the cross-origin-isolation headers) and measures:

* cold load to the first pass (an empty profile) and warm load (the model from
  the browser's store, OPFS), medians of WARM_LOADS, with every phase the
  worker times (onnxruntime-web's start, the model's bytes, session creation,
  tokenizer, Pyodide and how long the load waited for it), and the load call alone (`load_call_s`: from
  `window.onepass().load()` to a model ready to run, the span the peers' load
  times, without the page's navigation or a first pass), and the machine's processor time over the cold load,
  by thread (`cold_load_cpu`, benchmarks/cpu.py). Like the peers, ours runs in a persistent
  profile in a temporary folder, as a returning reader's browser keeps its
  storage on disk (an incognito context keeps it in memory);
* decode-1 / verify-6 / prefill-30 (predicting from its last row) with 1 and 2
  threads, timed in the worker around onnxruntime-web alone by the same
  harness (runtime/harness.js) as the Node checks, the same passes
  natively, their ratios, and the bridge's cost per pass (Python to
  JavaScript and back, with the conversions);
* step 5's three examples as its panel runs them (2 threads, the page's
  default): one token per pass against prompt lookup, wall time around the
  whole request, medians of EXAMPLE_RUNS, and whether the texts are identical;
* a first visit in two tabs opened together: each tab's load call, and how many
  chunk requests the site was sent (the model's chunks once each, not twice);
* the download: the model's bytes on the wire and in the store, the size of
  onnxruntime-web's memory once the model is loaded (`ort_heap_mb_after_load`) and
  once it has run the benchmark's passes (`ort_heap_mb`: the model in the tab),
  and a first visit through a throttled connection (THROTTLE_MBIT,
  THROTTLE_LATENCY_MS per connection: tools/site.py's ThrottledProxy), from the
  navigation to the first pass, FIRST_VISITS runs.

``--baseline EXPORT`` (an export folder, e.g. main's default export) measures that
export beside this one in the same run, as today's build serves it: its chunks
uncompressed. Its loads, memory and throttled first visits alternate with this
export's, and its passes are measured in turn with this export's, SIDE_BY_SIDE_ROUNDS
rounds in warm profiles (`passes_side_by_side`: medians and paired ratios).
``--baseline-runtime REV`` measures, beside this build, the same export served by the runtime
(docs/assets/onepass/runtime/) as it was at git revision REV, with the same draft, if any: a change to how the model is
loaded or held, before and after in one run (a runtime from before zstd gets the chunks gzip-compressed, as its builds
served them). ``--loads-only`` skips the passes, the examples, the two tabs and the peers;
``--no-first-visits`` the throttled first visits; ``--passes-only`` measures only the
passes side by side (this export's alone without a baseline).

Prints one JSON object of figures; asserts nothing. Measure on a quiet machine.
"""

import argparse
import contextlib
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.cpu import CpuSampler
from benchmarks.memory import MemorySampler
from benchmarks.peers import held_ids, peer_figures
from hooks.model import decompress, served_files, trained_for
from model_export.build import build
from model_export.check import load, speed
from onepass.examples import EXAMPLES
from tools.site import CHROMIUM, CHROMIUM_ARGS, Server, ThrottledProxy, build_site

ROOT = Path(__file__).resolve().parent.parent

THREADS = (1, 2)
WARM_LOADS = 3
EXAMPLE_RUNS = 3
LOAD_TIMEOUT_MS = 600_000
PASS_KEYS = ("decode_1_ms", "verify_6_ms", "prefill_30_ms")
THROTTLE_MBIT = 50
THROTTLE_LATENCY_MS = 20
FIRST_VISITS = 2
SIDE_BY_SIDE_ROUNDS = 6
MB = 1e6


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
    page.evaluate("() => window.onepass().run('generate', {text: 'Hello', maxNew: 1})")


def seconds(timings: dict) -> dict:
    return {k: round(v, 2) for k, v in timings.items()}


def warm_load(context, url: str, threads: int) -> tuple[object, float, dict]:
    """A page loaded from the Cache API and through its first pass: the page, the wall seconds, the phases."""
    began = time.perf_counter()
    page, info, _ = open_runtime(context, url, threads)
    passed = time.perf_counter()
    first_pass(page)
    return page, time.perf_counter() - began, {**info["timings"], "loadCall": info["load_call_s"],
                                               "firstPass": time.perf_counter() - passed}


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
                    const run = await window.onepass().run('generate', {text, mode, maxNew});
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


def ort_heap_mb(page, ids: list[int], **passes) -> float:
    """The size onnxruntime-web's memory has grown to, once the model has run the benchmark's passes (harness.js's
    passTimes, once each: ``passes`` sets their lengths): the model in the tab, and what the passes took."""
    bench = page.evaluate("(options) => window.onepass().bench(options)", {"ids": ids, "runs": 1, "warmup": 0, **passes})
    return round(bench["ort_heap_bytes"] / MB)


def load_figures(context, url: str, ids: list[int]) -> dict:
    """A cold load to the first pass (memory sampled), the model's memory in the tab, then WARM_LOADS warm loads."""
    figures = {}
    browser = context.browser
    with MemorySampler(browser) as load, CpuSampler() as cpu:
        began = time.perf_counter()
        page, info, _ = open_runtime(context, url)
        passed = time.perf_counter()
        first_pass(page)
        info["timings"].update(loadCall=info["load_call_s"], firstPass=time.perf_counter() - passed)
        figures["cold_load_to_first_pass_s"] = round(time.perf_counter() - began, 2)
    with MemorySampler(browser) as run:
        page.evaluate("() => window.onepass().run('generate', {text: 'Hello', maxNew: 16})")
    figures["memory"] = {"load": load.figures, "run": run.figures}
    figures["cold_load_cpu"] = cpu.figures  # the machine's processor time over the cold load, by thread
    # Passes of one and two tokens first (what the first pass and the run above took, about): ort's heap with the
    # model loaded; then the benchmark's passes (a 32-token past, 6 more, a 30-token prefill).
    figures["ort_heap_mb_after_load"] = ort_heap_mb(page, ids, past=1, verify=1, prefill=2)
    figures["ort_heap_mb"] = ort_heap_mb(page, ids)
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
    figures["warm_load_call_s"] = round(statistics.median(load[1]["loadCall"] for load in loads), 2)
    return figures


def throttled_first_visit(playwright, url: str) -> dict:
    """A first visit (a fresh profile) through a connection of THROTTLE_MBIT (tools/site.py's ThrottledProxy says
    why not Chromium's emulation): seconds from the navigation to the first pass, and the bytes on the wire
    (response bodies as they arrived, encoded), the model's and all of them."""
    proxy = ThrottledProxy(url, THROTTLE_MBIT, THROTTLE_LATENCY_MS)
    try:
        with tempfile.TemporaryDirectory() as profile:
            context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM,
                                                                    args=CHROMIUM_ARGS)
            finished = []
            context.on("requestfinished", lambda request: finished.append(request))
            page = context.new_page()
            page.set_default_timeout(LOAD_TIMEOUT_MS)
            began = time.perf_counter()
            page.goto(proxy.url)
            page.wait_for_function("() => window.onepass !== undefined")
            load_call = page.evaluate("""async () => {
                const began = performance.now();
                await window.onepass().load();
                return (performance.now() - began) / 1000;
            }""")
            first_pass(page)
            to_first_pass = time.perf_counter() - began
            sizes = [(request.url, request.sizes()["responseBodySize"]) for request in finished]
            context.close()
    finally:
        proxy.stop()
    return {"to_first_pass_s": round(to_first_pass, 1), "load_call_s": round(load_call, 1),
            "model_on_wire_mb": round(sum(size for u, size in sizes if "/model/" in u) / MB, 1),
            "all_on_wire_mb": round(sum(size for _, size in sizes) / MB, 1)}


def download_figures(site: Path) -> dict:
    """What the site's manifest says the model takes: on the wire, and kept in the browser (uncompressed)."""
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    graph = next(entry for entry in manifest["files"] if entry["name"] == manifest["graph"])
    files = served_files(manifest)
    draft = manifest.get("draft")
    return {"download_mb": round(manifest.get("download_size", sum(f["size"] for f in files)) / MB, 1),
            "stored_mb": round(sum(f["size"] for f in files) / MB, 1),
            "graph_mb": round(graph["size"] / MB, 1),
            "draft_download_mb": round(draft["download_size"] / MB, 1) if draft else 0,
            "parameters": manifest["model"]["parameters"], "word_tables": manifest["model"].get("word_tables"),
            "chunks": sum(len(f["chunks"]) for f in files)}


def served_uncompressed(site: Path) -> None:
    """The site's chunks decompressed in place, as builds before issue 23 served them: the loader takes plain bytes as
    it would from a host that undid the compression."""
    served_as(site, lambda plain: plain)


def served_gzipped(site: Path) -> None:
    """The site's chunks gzip-compressed at level 9 in place (under the same names), as builds before zstd (2026-12-07)
    served them, for a runtime of that time."""
    served_as(site, lambda plain: gzip.compress(plain, compresslevel=9, mtime=0))


def served_as(site: Path, pack) -> None:
    """Each of the site's chunks replaced by ``pack`` of its plain bytes, and the manifest's sizes on the wire with it."""
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    for entry in served_files(manifest):
        for chunk in entry["chunks"]:
            path = site / "model" / chunk["name"]
            path.write_bytes(pack(decompress(path.read_bytes())))
            chunk["download_size"] = path.stat().st_size
        entry["download_size"] = sum(chunk["download_size"] for chunk in entry["chunks"])
    for listing in (manifest, manifest.get("draft")):
        if listing:
            listing["download_size"] = sum(entry["download_size"] for entry in listing["files"])
    manifest["model_download_size"] = manifest["download_size"]
    manifest["download_size"] += manifest.get("draft", {}).get("download_size", 0)
    (site / "model" / "manifest.json").write_text(json.dumps(manifest, indent=2))


RUNTIME_FOLDERS = ("runtime", "docs/assets/onepass/runtime")  # the runtime's sources: since issue 24, and before


def runtime_files(rev: str) -> tuple[str, list[str]]:
    """Where the runtime's sources lie at git revision ``rev``, and their names there."""
    for folder in RUNTIME_FOLDERS:
        listed = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:{folder}"], cwd=ROOT, capture_output=True)
        if listed.returncode == 0:
            return folder, listed.stdout.decode().split()
    raise ValueError(f"no runtime at revision {rev} (looked in {', '.join(RUNTIME_FOLDERS)})")


def runtime_at(site: Path, rev: str) -> None:
    """The built site's runtime files replaced by the runtime's sources as they were at git revision ``rev``, and its
    chunks gzip-compressed if that runtime reads no zstd."""
    folder, names = runtime_files(rev)
    for name in names:
        shown = subprocess.run(["git", "show", f"{rev}:{folder}/{name}"], cwd=ROOT, capture_output=True, check=True)
        (site / "assets" / "onepass" / "runtime" / name).write_bytes(shown.stdout)
    if "zstd.js" not in names:
        served_gzipped(site)


def pass_times(page, ids: list[int]) -> dict:
    """The tab's own benchmark of its passes after ``ids`` (decode-1, verify-6, prefill-30; runtime/worker.js's bench)."""
    return page.evaluate("(ids) => window.onepass().bench({ids})", ids)


def browser_figures(url: str, ids: list[int], loads_only: bool = False) -> dict:
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        figures = load_figures(context, url, ids)
        if not loads_only:
            for threads in THREADS:
                page, _, _ = warm_load(context, url, threads)
                bench = pass_times(page, ids)
                figures[f"browser_{threads}t"] = {k: round(v, 2) if isinstance(v, float) else v for k, v in bench.items()}
                if threads == THREADS[-1]:
                    figures["step5_examples"] = example_race(page)
                page.close()
        context.close()
        if not loads_only:
            figures["two_tabs_first_visit"] = two_tabs(playwright, url)
    return figures


def passes_side_by_side(urls: dict, ids: list[int], rounds: int = SIDE_BY_SIDE_ROUNDS) -> dict:
    """The benchmark's passes on each site in ``urls`` ({name: url}, one of them "this"), in turn within each of
    ``rounds`` rounds, at each thread count, each site in a warm profile of its own: medians by site and, against "this", the
    median of the rounds' paired ratios (other / this)."""
    runs = {threads: {name: [] for name in urls} for threads in THREADS}
    with sync_playwright() as playwright, contextlib.ExitStack() as stack:
        contexts = {}
        for name, url in urls.items():
            profile = stack.enter_context(tempfile.TemporaryDirectory())
            contexts[name] = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM,
                                                                           args=CHROMIUM_ARGS)
            stack.callback(contexts[name].close)
            page, _, _ = open_runtime(contexts[name], url)  # the cold load, once, so that every measured one is warm
            page.close()
        for threads in THREADS:
            for round_ in range(rounds):
                # Every other round in the other order, so that neither site always follows the other.
                for name in list(urls)[::-1 if round_ % 2 else 1]:
                    page, _, _ = warm_load(contexts[name], urls[name], threads)
                    runs[threads][name].append(pass_times(page, ids))
                    page.close()
    figures = {}
    for threads, by_site in runs.items():
        figures[f"{threads}t"] = {name: {key: round(statistics.median(run[key] for run in site), 2) for key in PASS_KEYS}
                                  for name, site in by_site.items()}
        for name, site in by_site.items():
            if name != "this":
                ratios = {key: [round(other[key] / this[key], 3) for this, other in zip(by_site["this"], site)]
                          for key in PASS_KEYS}
                figures[f"{threads}t"][f"{name}_over_this"] = {key: round(statistics.median(ratios[key]), 3) for key in PASS_KEYS}
                figures[f"{threads}t"][f"{name}_over_this_by_round"] = ratios
    return {"rounds": rounds, **figures}


def first_visits(urls: dict) -> dict:
    """FIRST_VISITS throttled first visits of each site in ``urls`` ({name: url}), alternating: each run and medians."""
    runs = {name: [] for name in urls}
    with sync_playwright() as playwright:
        for _ in range(FIRST_VISITS):
            for name, url in urls.items():
                runs[name].append(throttled_first_visit(playwright, url))
    return {name: {"connection": f"{THROTTLE_MBIT} Mbit/s, {THROTTLE_LATENCY_MS} ms",
                   "to_first_pass_s": round(statistics.median(run["to_first_pass_s"] for run in visits), 1), "runs": visits}
            for name, visits in runs.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="default")
    parser.add_argument("--baseline", type=Path, help="an export folder to measure beside this one (e.g. main's)")
    parser.add_argument("--baseline-runtime", metavar="REV",
                        help="measure this export beside it served by the runtime at git revision REV")
    parser.add_argument("--draft", type=Path, help="the draft's folder to ship beside this export (python -m draft; "
                        "make bench-browser passes build/draft_dir.txt's): the first visit then downloads both")
    parser.add_argument("--loads-only", action="store_true", help="only the download, load and memory figures")
    parser.add_argument("--no-first-visits", action="store_true", help="no throttled first visits")
    parser.add_argument("--passes-only", action="store_true",
                        help="only the passes, this site's and the baseline's (if any) in turn")
    args = parser.parse_args()

    folder = build(args.source, log=lambda message: print(message, file=sys.stderr))
    if args.draft and not trained_for(json.loads((args.draft / "draft.json").read_text()),
                                      json.loads((folder / "manifest.json").read_text())):
        print(f"bench_browser: {args.draft} is not this export's draft; measuring without a draft", file=sys.stderr)
        args.draft = None
    held = held_ids(folder)
    figures = {"model": json.loads((folder / "manifest.json").read_text())["model"]["name"],
               "targets": {"download_mb": 420, "ort_heap_mb": 520, "cold_load_to_first_pass_s": 8,
                           "warm_load_to_first_pass_s": 4}}
    with tempfile.TemporaryDirectory() as scratch:
        sites = {"this": build_site(folder, Path(scratch) / "site", chunk_mb="50", draft_dir=args.draft)}
        if args.baseline:
            sites["baseline"] = build_site(args.baseline, Path(scratch) / "baseline", chunk_mb="50")
            served_uncompressed(sites["baseline"])
        elif args.baseline_runtime:
            sites["baseline"] = build_site(folder, Path(scratch) / "baseline", chunk_mb="50", draft_dir=args.draft)
            runtime_at(sites["baseline"], args.baseline_runtime)
        servers = {name: Server(site) for name, site in sites.items()}
        urls = {name: server.url for name, server in servers.items()}
        try:
            if args.passes_only:
                figures["passes_side_by_side"] = passes_side_by_side(urls, held[:64])
                print(json.dumps(figures, indent=2))
                return
            figures["download"] = {name: download_figures(site) for name, site in sites.items()}
            figures.update(browser_figures(urls["this"], held[:64], args.loads_only))
            if "baseline" in sites:
                figures["baseline"] = {"export": str(args.baseline or folder), "runtime": args.baseline_runtime or "this",
                                       **browser_figures(urls["baseline"], held[:64], loads_only=True)}
            if "baseline" in sites and not args.loads_only:
                figures["passes_side_by_side"] = passes_side_by_side(urls, held[:64])
            if not args.no_first_visits:
                figures["first_visit_throttled"] = first_visits(urls)
        finally:
            for server in servers.values():
                server.stop()
    if not args.loads_only:
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
