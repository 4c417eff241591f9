"""MkDocs build hook: precompute each panel's default example on the site's model, natively.

While the model downloads, the panels show these runs, so the reader can start
before anything has loaded (as the Transformer Explainer does). Each is labelled
a recorded run and stamped with where and when it was recorded (the build
machine, natively): the same model and code, but not the reader's times, so
no page mixes them with live ones. They come from the code the browser runs:
``onepass.entry``'s entry points, with the panels' own defaults, over
``backends/native.py`` and the export's tokenizer, each pass's event recorded
from the same callback the worker posts from. ``site/model/traces.json`` carries
the model's identity (``hooks/model.py`` writes it into the site's manifest), so
the page never shows a trace of another model. Results are cached in
``ONEPASS_CACHE`` (else the export folder) under a key of the model and the
code, so a repeated build costs nothing. No ``ONEPASS_MODEL_DIR``: nothing to do.
"""

import asyncio
import hashlib
import json
import os
import platform
import time
from pathlib import Path

from hooks.model import identity
from model_export.cache import write_whole
from onepass import entry
from onepass.defaults import DEFAULTS

ROOT = Path(__file__).resolve().parent.parent

LOOKUP_EXAMPLE = DEFAULTS["lookup"]["examples"][0]  # step 5 opens on its first example


def build_machine() -> str:
    """The machine the traces are recorded on, in a few words, for the note under each one."""
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass  # not Linux: the platform's own name will do
    return f"{cpu}, {os.cpu_count()} cores"


def code_key(manifest: dict) -> str:
    digest = hashlib.sha256(identity(manifest).encode())
    for path in sorted((ROOT / "py" / "onepass").rglob("*.py")) + [Path(__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


async def recorded(model, tokenizer, request: dict) -> dict:
    """A run as the panels replay it: the request, the result and each pass's event."""
    events = []
    result = json.loads(await entry.generate(model, tokenizer, request, lambda event: events.append(json.loads(event))))
    return {"request": request, "result": result, "events": events}


async def precompute(folder: Path) -> dict:
    from onepass.backends.native import THREADS, NativeModel
    from onepass.backends.tokenizer import NativeTokenizer

    model, tokenizer = NativeModel(folder), NativeTokenizer(folder)
    stamp = {"machine": build_machine(), "threads": THREADS, "date": time.strftime("%Y-%m-%d")}
    greedy, guess = DEFAULTS["greedy"], DEFAULTS["guess"]
    all_at_once = {"text": DEFAULTS["all-at-once"]["text"]}
    checked = {"text": guess["text"], "guess": guess["guess"], "kvCache": True}
    own = await recorded(model, tokenizer, {"text": guess["text"], "mode": "greedy", "kvCache": True,
                                            "maxNew": guess["continuationTokens"]})
    traces = {
        "greedy": await recorded(model, tokenizer, {"text": greedy["text"], "mode": "greedy", "kvCache": True,
                                                    "maxNew": greedy["maxNew"]}),
        "all-at-once": {"request": all_at_once, "result": json.loads(await entry.predict(model, tokenizer, all_at_once))},
        "guess": {"request": checked, "continuation": own["result"]["text"],
                  "outcome": json.loads(await entry.verify(model, tokenizer, checked))},
        "lookup": await recorded(model, tokenizer, {"text": LOOKUP_EXAMPLE["prompt"], "mode": "lookup", "kvCache": True,
                                                    "maxNew": LOOKUP_EXAMPLE["max_new"]}),
    }
    return {key: {**trace, "recorded": stamp} for key, trace in traces.items()}


def on_post_build(config):
    folder = os.environ.get("ONEPASS_MODEL_DIR")
    if not folder:
        return
    folder = Path(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    cache = Path(os.environ.get("ONEPASS_CACHE") or folder) / f"traces-{code_key(manifest)}.json"
    if not cache.is_file():
        data = {"identity": identity(manifest), "traces": asyncio.run(precompute(folder))}
        write_whole(cache, json.dumps(data, ensure_ascii=False).encode())  # two builds at once
    target = Path(config["site_dir"]) / "model"
    target.mkdir(parents=True, exist_ok=True)
    (target / "traces.json").write_text(cache.read_text())
