"""The draft's corpus: requests, and the target's own greedy answers to them, made once and committed in shards.

The draft learns what the shipped int8 target writes, so its data is the target's own greedy answers (SuffixDecoding
and EAGLE's self-distillation both learn from the served model's outputs). Making them takes hours of the target's
passes, so they are made once, on a developer's machine, in deterministic shards of ``SHARD`` requests, and committed
(``draft/corpus/shard-NNN.json.gz``: the token ids only, about 150 kB a shard); training reads them back and asks the
target for its features over them in one teacher-forced pass a text (minutes, and bit for bit the features of the
decoding passes: position independence). The reader's build reads none of it.

Requests come from these sources, each saying where it comes from and under what licence (``SOURCES``); every
request that holds or is held by a held-out prompt (the benchmark's, step 6's default, step 5's examples) is left
out (``held_out``; ``tests/test_draft_shipped.py`` checks it). Our own requests come first (the first shard holds
them all), the rest in a fixed shuffle (by each request's sha256), so every later shard mixes every other source and
alpha against the amount of data is measured by training on the first k. An answer does not depend on the answers
decoded beside it, so a shard remade in another order reuses the answers already committed (``known_answers``).

A shard is made only where the native int8 arithmetic is the tab's (``model_export.check.native_int8_products_exact``:
on a processor without VNNI the native kernel saturates, and its answers are another model's), and every shard names
the target it was made by (its identity and its model's name), the chat template and the answers' cap. A shard's
answers are reused only by the export that made them (``known_answers``); the corpus as a whole is one model's
(``load``), whichever of its exports made each shard.
"""

import argparse
import functools
import gzip
import hashlib
import json
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onepass.seam import target_identity
from onepass.examples import EXAMPLES, chat

from . import instructions as ask

HERE = Path(__file__).parent
CORPUS = HERE / "corpus"
FORMAT = 1
SHARD = 512  # requests a shard: about 80 k tokens, some 7 minutes of the target on 2 cores
MAX_NEW = 160  # new tokens an answer at most
BATCH = 32  # answers decoded together (``data.aligned_batches``): 1.3 times the tokens a second of 16
TEMPLATE = chat("{request}")

SOURCES = {
    "ours": "draft/instructions.py's instructions(): this repository's own text (its licence)",
    "library": "coding requests made from the first lines of Python's standard library docstrings, in seven "
               "phrasings (instructions.py; Python Software Foundation License 2.0)",
    "subjects": "prose requests over subjects (instructions.py's SUBJECTS and SUBJECT_TEMPLATES: this repository's "
                "text)",
    "modules": "requests about each public standard-library module (its dotted name; Python Software Foundation "
               "License 2.0)",
    "sentences": "standard-library docstrings' first sentences to rewrite, translate or implement (Python Software "
                 "Foundation License 2.0)",
}


def known_answers(folder: Path, identity: str, max_new: int) -> dict[str, tuple[int, list[int]]]:
    """request -> (prompt length, ids) for every answer already in ``folder``'s shards made by the same target with the
    same template and cap: an answer does not depend on the texts decoded beside it (``data.aligned_batches``), so a
    shard remade in another order reuses them instead of decoding them again."""
    known = {}
    for path in sorted(folder.glob("shard-*.json.gz")):
        shard = read_shard(path)
        if (shard["format"], shard["template"], shard["target"], shard["max_new"]) == (FORMAT, TEMPLATE, identity,
                                                                                       max_new):
            known.update(answers(shard))
    return known


def answers(shard: dict) -> dict[str, tuple[int, list[int]]]:
    """request -> (prompt length, ids) of one shard's texts."""
    return {t["request"]: (t["prompt"], t["ids"]) for t in shard["texts"]}


def held_out() -> list[str]:
    """Every prompt the draft is measured on and so must never learn from."""
    from onepass.defaults import DEFAULTS

    benchmark = json.loads((HERE.parent / "benchmarks" / "draft_prompts.json").read_text())
    return [*benchmark, DEFAULTS["draft"]["text"], *(example.prompt for example in EXAMPLES)]


def meets(request: str, prompts: list[str]) -> bool:
    low = request.lower()
    return any(low in prompt.lower() or prompt.lower() in low for prompt in prompts)


@functools.cache
def requests() -> tuple[tuple[str, str], ...]:
    """(source, request) for the whole corpus, held-out prompts left out, in the corpus's fixed order."""
    tasks = ask.library_tasks()
    library = [template.format(task=task) for template in [*ask._TEMPLATES, *ask.MORE_TEMPLATES] for task in tasks]
    every = ([("ours", text) for text in ask.instructions()] + [("library", text) for text in library]
             + [("subjects", text) for text in ask.subject_requests()]
             + [("modules", text) for text in ask.module_requests()]
             + [("sentences", text) for text in ask.sentence_requests()])
    avoid, seen, kept = held_out(), set(), []
    for source, text in every:
        if text not in seen and not meets(text, avoid):
            seen.add(text)
            kept.append((source, text))
    # This project's own requests first (the first shard holds them all): they are what the pages' readers ask, and a
    # draft trained on the first two shards in the fixed shuffle, where they were 2 % of the data, drafted the
    # held-out chat requests worse than the quick build's, where they are a third (benchmarks/FINDINGS.md, "The
    # committed corpus: our requests first"). The rest follow in the fixed shuffle.
    return tuple(sorted(kept, key=lambda item: (item[0] != "ours", hashlib.sha256(item[1].encode()).hexdigest())))


def current(k: int, folder: Path = CORPUS, size: int = SHARD) -> bool:
    """Whether shard ``k`` holds the requests the corpus's order puts there (a changed order or source remakes it,
    its known answers reused)."""
    texts = read_shard(shard_path(k, folder))["texts"]
    return [(t["source"], t["request"]) for t in texts] == list(requests()[k * size:(k + 1) * size])


def shard_count(total: int) -> int:
    return (total + SHARD - 1) // SHARD


def shard_path(k: int, folder: Path = CORPUS) -> Path:
    return folder / f"shard-{k:03d}.json.gz"


@dataclass(frozen=True)
class Text:
    source: str
    request: str
    ids: np.ndarray  # int64 [T]: the chat prompt, then the target's greedy answer
    prompt: int  # where the answer starts


def make_shard(target, tokenizer, k: int, folder: Path = CORPUS, size: int = SHARD, max_new: int = MAX_NEW,
               log=print, known: dict | None = None) -> Path:
    """The target's answers to shard ``k``'s requests (``size`` a shard), written to ``shard_path(k, folder)``;
    answers already ``known`` (by default: in ``folder``'s shards, ``known_answers``) are reused."""
    from .data import Sequences, chat_answers

    chosen = requests()[k * size:(k + 1) * size]
    if known is None:
        known = known_answers(folder, target_identity(target.manifest), max_new)
    began = time.perf_counter()
    into = Sequences()
    chat_answers(target, tokenizer, [text for _, text in chosen if text not in known], max_new, BATCH, into)
    seconds = time.perf_counter() - began
    by_prompt = {}
    for ids, start in zip(into.ids, into.starts):
        by_prompt.setdefault(tuple(ids[:start].tolist()), ids.tolist())
    texts = []
    for source, request in chosen:
        if request in known:
            prompt, ids = known[request]
        else:
            encoded = tuple(tokenizer.encode(chat(request), add_special_tokens=False).ids)
            prompt, ids = len(encoded), by_prompt[encoded]
        # An answer's closing token is written only where a text decoded beside it went on (``Target.greedy``: the
        # last token has no pass of its own), so it is never kept: the row before it, whose label is the target's
        # own choice of it, is what teaches the draft to stop, and a shard is the same whatever its batches.
        ids = ids[:-1] if len(ids) > prompt and ids[-1] in target.eos else ids
        texts.append({"source": source, "request": request, "prompt": prompt, "ids": ids})
    shard = {"format": FORMAT, "shard": k, "target": target_identity(target.manifest),
             "model": target.manifest["model"]["name"], "template": TEMPLATE, "max_new": max_new, "texts": texts,
             "made": {"processor": processor(), "seconds": round(seconds, 1),
                      "reused": sum(request in known for _, request in chosen),
                      "tokens": sum(len(t["ids"]) for t in texts), "python": platform.python_version()}}
    path = shard_path(k, folder)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=9) as out:
        out.write(json.dumps(shard, separators=(",", ":")).encode())
    partial.replace(path)
    log(f"corpus: shard {k}: {shard['made']['tokens']} tokens in {seconds:.0f} s "
        f"({shard['made']['reused']} of {len(chosen)} answers reused)")
    return path


def processor() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def read_shard(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def load(shards: int | None = None, folder: Path = CORPUS, model: str | None = None) -> list[Text]:
    """The first ``shards`` committed shards (all: None), in order. Every shard must name one model (``model``, when
    given: a manifest's model name) and the chat template this code writes, or the data would teach another model.

    Shards made by different exports of that model are one corpus: a shard holds texts, and what the draft learns
    from them, the features and the next token at every position, is always asked of the target it is trained for
    (``shipped.sequences``). An export of the same source on another processor, or after an exporter's change,
    writes the same answers but where a near-tie falls the other way."""
    texts, models = [], set()
    for path in paths(shards, folder):
        shard = read_shard(path)
        if shard["format"] != FORMAT or shard["template"] != TEMPLATE:
            raise ValueError(f"{path.name} was made with another format or chat template")
        models.add(shard["model"])
        texts += shard_texts(shard)
    if len(models) > 1 or (model is not None and models and models != {model}):
        raise ValueError(f"the corpus's shards were made by other models than this one: {sorted(models)}")
    return texts


def paths(shards: int | None = None, folder: Path = CORPUS) -> list[Path]:
    """The first ``shards`` committed shards' files (all: None), in order."""
    return sorted(folder.glob("shard-*.json.gz"))[:shards]


def shard_texts(shard: dict) -> list[Text]:
    return [Text(t["source"], t["request"], np.asarray(t["ids"], np.int64), t["prompt"]) for t in shard["texts"]]


def fingerprint(shards: int | None = None, folder: Path = CORPUS) -> str:
    """The sha256 of the shards' bytes, in order: what a draft records it learned from."""
    digest = hashlib.sha256()
    for path in paths(shards, folder):
        digest.update(path.name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draft.corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=Path, required=True, help="the default model's export (python -m model_export)")
    parser.add_argument("--shards", type=int, default=None, help="make shards 0 .. N-1 that are missing (all: omit)")
    args = parser.parse_args(argv)
    from tokenizers import Tokenizer

    from .target import Target

    from model_export.check import native_int8_products_exact

    if not native_int8_products_exact():
        raise SystemExit("this processor's native int8 kernel saturates (no VNNI): its answers are not the tab's "
                         "model's, so it makes no corpus (model_export.check.native_int8_products_exact)")
    target = Target(args.target)
    tokenizer = Tokenizer.from_file(str(args.target / "tokenizer.json"))
    identity = target_identity(target.manifest)
    for path in sorted(CORPUS.glob("shard-*.json.gz"))[:1]:
        if read_shard(path)["model"] != target.manifest["model"]["name"]:
            raise SystemExit(f"the committed shards were made by another model than {args.target}'s")
    total = shard_count(len(requests()))
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    known = known_answers(CORPUS, identity, MAX_NEW)  # read before any shard is remade over them
    for k in range(min(total, args.shards if args.shards is not None else total)):
        if not shard_path(k).is_file() or not current(k):
            known.update(answers(read_shard(make_shard(target, tokenizer, k, log=log, known=known))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
