"""MkDocs build hook: precompute each panel's default example on the site's model, natively.

While the model downloads, the panels show these runs, so the reader can start
before anything has loaded (as the Transformer Explainer does). Each is labelled
a recorded run and stamped with where and when it was recorded (the build
machine, natively): the same model and code, but not the reader's times, so
no page mixes them with live ones. They come from the same ``py/onepass`` code the
browser runs (``backends/browser.py``'s entry points over ``backends/native.py``),
and ``site/model/traces.json`` carries the model's identity (its files'
hashes), so the page never shows a trace of another model. Results are cached
in ``ONEPASS_CACHE`` (else the export folder) under a key of the model and the
code, so a repeated build costs nothing. No ``ONEPASS_MODEL_DIR``: nothing to do.

The defaults are those of the panels (docs/assets/onepass/panels/*.js); the panels
take the trace's request as their starting text, so the two stay in step.
"""

import asyncio
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))

from onepass.backends import browser  # noqa: E402
from onepass.examples import EXAMPLES  # noqa: E402

GREEDY = {"text": "The capital of France is Paris. The capital of Germany is", "mode": "greedy", "kvCache": True, "maxNew": 16}
ALL_AT_ONCE = {"text": "The capital of France is Paris. The capital of Germany is Berlin."}
GUESS = {"text": "The capital of France is Paris. The capital of Germany is", "guess": " Berlin.", "kvCache": True}
CONTINUATION_TOKENS = 6  # the "right throughout" guess: the model's own next tokens
LOOKUP = {"text": EXAMPLES[0].prompt, "mode": "lookup", "kvCache": True, "maxNew": EXAMPLES[0].max_new}


def build_machine() -> str:
    """The machine the traces are recorded on, in a few words, for the note under each one."""
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass  # not Linux: the platform's own name will do
    return f"{cpu}, {os.cpu_count()} cores"


def identity(manifest: dict) -> str:
    """As the browser computes it (docs/assets/onepass/runtime/identity.js)."""
    return ":".join(f["sha256"] for f in manifest["files"])


def code_key(manifest: dict) -> str:
    digest = hashlib.sha256(identity(manifest).encode())
    for path in sorted((ROOT / "py" / "onepass").rglob("*.py")) + [Path(__file__)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


class Labels:
    """Token labels and streamed text, as the worker makes them (whole characters only in the text)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def of(self, ids) -> dict:
        return {str(token): self.tokenizer.decode([token]) for token in set(ids)}

    def stream(self):
        ids, shown = [], [""]

        def push(added: list[int]) -> str:
            ids.extend(added)
            text = self.tokenizer.decode(ids)
            # A character split across tokens decodes as U+FFFD until its last byte arrives: hold it back.
            complete = text.rstrip("\ufffd")
            piece = complete[len(shown[0]):]
            shown[0] = complete
            return piece

        return push


async def recorded(model, labels: Labels, request: dict) -> dict:
    """A run as the panels replay it: the request, the result (with labels) and each pass's event."""
    encode = labels.tokenizer.encode
    events, push = [], labels.stream()

    def on_pass(row: str) -> None:
        record = json.loads(row)
        events.append({"pass": record, "text": push(record["added"])})

    run = json.loads(await browser.generate(model, encode(request["text"]), request["mode"], request["kvCache"],
                                            request["maxNew"], on_pass))
    ids = run["prompt"] + run["tokens"] + [t for p in run["passes"] for t in p["draft"] + p["predicted"]
                                           + ((p.get("match") or {}).get("ngram") or [])]
    run.update(text=labels.tokenizer.decode(run["tokens"]), promptText=request["text"], labels=labels.of(ids))
    return {"request": request, "result": run, "events": events}


async def precompute(folder: Path) -> dict:
    from onepass.backends.native import THREADS, NativeModel
    from onepass.backends.tokenizer import NativeTokenizer

    model, labels = NativeModel(folder), Labels(NativeTokenizer(folder))
    stamp = {"machine": build_machine(), "threads": THREADS, "date": time.strftime("%Y-%m-%d")}
    encode = labels.tokenizer.encode
    predictions = json.loads(await browser.predict(model, encode(ALL_AT_ONCE["text"])))
    predictions["labels"] = labels.of(predictions["ids"] + [t for row in predictions["topk_ids"] for t in row])
    prompt = encode(GUESS["text"])
    checked = json.loads(await browser.verify_guess(model, prompt, encode(GUESS["guess"]), GUESS["kvCache"]))
    own = await recorded(model, labels, {**GREEDY, "text": GUESS["text"], "maxNew": CONTINUATION_TOKENS})
    traces = {
        "greedy": await recorded(model, labels, GREEDY),
        "all-at-once": {"request": ALL_AT_ONCE, "result": predictions},
        "guess": {"request": GUESS, "continuation": own["result"]["text"],
                  "outcome": {"pass": checked, "prompt": prompt, "labels": labels.of(checked["draft"] + checked["predicted"]
                                                                                     + checked["added"])}},
        "lookup": await recorded(model, labels, LOOKUP),
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
        cache.write_text(json.dumps(data, ensure_ascii=False))
    target = Path(config["site_dir"]) / "model"
    target.mkdir(parents=True, exist_ok=True)
    (target / "traces.json").write_text(cache.read_text())
