"""The draft model in the tab: step 6's request (``generate`` in mode ``draft``, and ``lookup+draft``, its "Copy
first", each with its one-at-a-time baseline) on the held-out chat prompts and on step 5's examples, in Chromium, on
the site ``make serve`` builds; and both with each round weighed (``draft-adaptive``, ``lookup+draft-adaptive``: the
request's ``adaptive``, ``onepass/policy.py``), as natively (``bench_draft``).

    .venv/bin/python -m benchmarks.bench_draft_browser [--site site] [--source default] [--gammas 1,2] [--every 1]
                                                       [--modes draft,lookup+draft,draft-adaptive,...]
                                                       [--max-new 64] [--threads 2]
                                                       [--without-answers]

Each prompt runs once per draft length, drafted and then one at a time in the same request, as the panel runs it:
the wall clock of both, measured in the worker's Python, gives the tab's speed-up; the draft's small passes give its
cost c against the tab's own one-token passes (``acceptance.cost_ratio``). Step 5's examples run one at a time,
with prompt lookup and with the draft (medians of seven). The text must equal one at a time on every prompt.
Prints one JSON object with the issue's targets beside the figures; asserts nothing. ``--site`` serves a site already
built (``make site``); without it the site is built with the export and its draft into a temporary folder, with
``--without-answers`` from a copy of the draft whose table of the model's answers is empty (copy first from the text
only: the native benchmark's row "lookup+draft, text only").
"""

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.bench_draft import NEW_TOKENS, PROMPTS, TARGETS
from model_export.build import build
from model_export.cache import sha256_file
from onepass.contract import DRAFTING, Generate
from onepass.examples import EXAMPLES, chat
from tools.site import CHROMIUM, CHROMIUM_ARGS, Server, build_site

LOAD_TIMEOUT_MS = 900_000
EXAMPLE_RUNS = 7  # step 5's examples are short (Spelling: 0.67 s one at a time), and a run varies by ±15 % here
ADAPTIVE = "-adaptive"  # a mode's suffix: the same draft mode with its rounds weighed (the request's ``adaptive``)
MODES = [*DRAFTING, *(f"{mode}{ADAPTIVE}" for mode in DRAFTING)]


def request(mode: str, **fields) -> dict:
    """The generate request of a benchmark's ``mode`` (a page mode, or a draft mode with ``ADAPTIVE``)."""
    base = mode.removesuffix(ADAPTIVE)
    return {"mode": base, **fields, **({"adaptive": True} if mode.endswith(ADAPTIVE) else {})}

RUN = """async (request) => {
    const began = performance.now();
    const run = await window.onepass().run('generate', request);
    return {...run, page_seconds: (performance.now() - began) / 1000};
}"""


def positions(runs: list[dict]) -> list[float]:
    """Acceptance per draft position over ``runs``: accepted over reached, summed over the prompts."""
    reached, accepted = {}, {}
    for run in runs:
        for row in run["draft"]["acceptance"]:
            reached[row["position"]] = reached.get(row["position"], 0) + row["reached"]
            accepted[row["position"]] = accepted.get(row["position"], 0) + row["accepted"]
    return [round(accepted[p] / reached[p], 3) if reached[p] else None for p in sorted(reached)]


def held_out(page, prompts: list[str], gamma: int, max_new: int, mode: str = "draft") -> dict:
    runs = []
    for index, text in enumerate(prompts):
        runs.append(page.evaluate(RUN, request(mode, text=chat(text), gamma=gamma, maxNew=max_new, baseline=True)))
        print(f"\r{mode}, gamma {gamma}: {index + 1}/{len(prompts)} prompts", end="", file=sys.stderr)
    print(file=sys.stderr)
    drafted = sum(run["wallSeconds"] for run in runs)
    greedy = sum(run["baseline"]["wallSeconds"] for run in runs)
    reached = sum(row["reached"] for run in runs for row in run["draft"]["acceptance"])
    accepted = sum(row["accepted"] for run in runs for row in run["draft"]["acceptance"])
    costs = [run["draft"]["c"] for run in runs if run["draft"]["c"] is not None]
    return {
        "prompts": len(runs), "identical": sum(run["baseline"]["identical"] for run in runs),
        "tokens": sum(len(run["tokens"]) for run in runs),
        "passes": sum(run["totals"]["passes"] for run in runs),
        "greedy_passes": sum(run["baseline"]["totals"]["passes"] for run in runs),
        "draft_passes": sum(run["draft"]["passes"] for run in runs),
        "copies": sum(run["draft"]["copies"] for run in runs),
        "copied_tokens": sum(run["draft"]["copiedTokens"] for run in runs),
        "copies_from_answers": sum(run["draft"]["fromAnswers"] for run in runs),
        "rounds": {kind: sum(run["draft"]["rounds"].get(kind, 0) for run in runs)
                   for kind in sorted({kind for run in runs for kind in run["draft"]["rounds"]})},
        "drafted_s": round(drafted, 2), "greedy_s": round(greedy, 2), "speedup": round(greedy / drafted, 3),
        "alpha": round(accepted / reached, 3) if reached else None, "alpha_per_position": positions(runs),
        "c_median": round(statistics.median(costs), 4) if costs else None,
        "predicted_median": _median([run["draft"]["predicted"] for run in runs]),
        "best_gamma_median": _median([run["draft"]["bestGamma"] for run in runs]),
    }


def _median(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 3) if values else None


def examples(page, gamma: int) -> dict:
    """Step 5's examples: one at a time, prompt lookup, the draft model and both, wall seconds (medians) and ratios."""
    race = {}
    for example in EXAMPLES:
        times, texts = {mode: [] for mode in ("greedy", "lookup", *MODES)}, {}
        for _ in range(EXAMPLE_RUNS):
            for mode in times:
                run = page.evaluate(RUN, request(mode, text=example.prompt, maxNew=example.max_new,
                                                 **({"gamma": gamma} if mode in MODES else {})))
                times[mode].append(run["wallSeconds"])
                texts[mode] = run["text"]
        greedy = statistics.median(times["greedy"])
        race[example.key] = {**{f"{mode}_s": round(statistics.median(t), 2) for mode, t in times.items()},
                             **{f"{mode}_speedup": round(greedy / statistics.median(times[mode]), 2)
                                for mode in ("lookup", *MODES)},
                             "identical": len(set(texts.values())) == 1}
    return race


def measure(url: str, prompts: list[str], gammas: list[int], max_new: int, threads: int, modes: list[str]) -> dict:
    with sync_playwright() as playwright, tempfile.TemporaryDirectory() as profile:
        context = playwright.chromium.launch_persistent_context(profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.goto(url)
        page.wait_for_function("() => window.onepass !== undefined")
        began = time.perf_counter()
        info = page.evaluate("(threads) => window.onepass().load(null, threads)", threads)
        figures = {"threads": info["threads"], "load_s": round(time.perf_counter() - began, 1), "held_out": {}}
        # Warm-up: the first passes of a fresh session (and the draft's) are slower than the rest.
        page.evaluate(RUN, {"text": chat("Say hello."), "mode": "draft", "gamma": gammas[0], "maxNew": 8, "baseline": True})
        for gamma in gammas:
            for mode in modes:  # alternated per draft length, so that a drift of the machine touches both alike
                figures["held_out"].setdefault(mode, {})[f"gamma_{gamma}"] = held_out(page, prompts, gamma, max_new, mode)
        best = max(gammas, key=lambda g: figures["held_out"][modes[0]][f"gamma_{g}"]["speedup"])
        figures["examples"] = examples(page, best)
        figures["best_gamma"] = best
        context.close()
    return figures


def without_answers(draft: Path, folder: Path) -> Path:
    """A copy of the draft folder ``draft`` in ``folder`` whose table of the model's answers has no rows."""
    shutil.copytree(draft, folder)
    manifest = json.loads((folder / "draft.json").read_text())
    path = folder / manifest["answers"]["file"]
    table = json.loads(path.read_text())
    path.write_text(json.dumps({**table, "rows": {order: [] for order in table["rows"]}}) + "\n")
    for entry in manifest["files"]:
        if entry["name"] == path.name:
            entry.update(size=path.stat().st_size, sha256=sha256_file(path))
    manifest["answers"]["rows"] = 0
    (folder / "draft.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, help="a built site (make site); default: build one with the draft")
    parser.add_argument("--source", default="default")
    parser.add_argument("--draft", type=Path, help="the draft folder, when building the site (default: python -m draft's)")
    parser.add_argument("--gammas", default=str(Generate.gamma), help="draft lengths to compare (default: step 6's)")
    parser.add_argument("--modes", default=",".join(MODES), help="the draft modes to run on the held-out prompts")
    parser.add_argument("--every", type=int, default=1, help="every N-th held-out prompt only")
    parser.add_argument("--max-new", type=int, default=NEW_TOKENS)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--without-answers", action="store_true",
                        help="build the site with the draft's table of answers emptied (not with --site)")
    args = parser.parse_args()
    if args.site and args.without_answers:
        parser.error("--without-answers builds its own site: leave out --site")

    prompts = json.loads(PROMPTS.read_text())[::args.every]
    gammas = [int(g) for g in args.gammas.split(",") if g]
    with tempfile.TemporaryDirectory() as scratch:
        site = args.site
        if site is None:
            export = build(args.source, log=lambda message: print(message, file=sys.stderr))
            from draft.build import build as build_draft

            draft = args.draft or build_draft(export, log=lambda message: print(message, file=sys.stderr))
            if args.without_answers:
                draft = without_answers(draft, Path(scratch) / "draft")
            site = build_site(export, Path(scratch) / "site", chunk_mb="50", draft_dir=draft)
        manifest = json.loads((site / "model" / "manifest.json").read_text())
        if "draft" not in manifest:
            sys.exit(f"{site} was built without a draft model: {manifest.get('draft_unavailable')}")
        server = Server(site)
        try:
            figures = measure(server.url, prompts, gammas, args.max_new, args.threads,
                              [mode for mode in args.modes.split(",") if mode])
        finally:
            server.stop()
    best = f"gamma_{figures['best_gamma']}"
    held = next(iter(figures["held_out"].values()))[best]
    figures = {"model": manifest["model"]["name"], "draft": {k: manifest["draft"].get(k) for k in
                                                            ("design", "window", "parameters", "readout_size")},
               "max_new": args.max_new, "targets": TARGETS, **figures,
               "summary": {"tab_speedup": held["speedup"], "tab_c": held["c_median"], "alpha_mean": held["alpha"],
                           "alpha_per_position": held["alpha_per_position"],
                           **{f"{mode}_speedup": runs[best]["speedup"] for mode, runs in figures["held_out"].items()},
                           "identical_everywhere": all(runs[key]["identical"] == runs[key]["prompts"]
                                                       for runs in figures["held_out"].values() for key in runs)
                           and all(row["identical"] for row in figures["examples"].values()),
                           "examples_slowest": min(row[f"{mode}_speedup"] for row in figures["examples"].values()
                                                   for mode in ("lookup", *MODES))}}
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
