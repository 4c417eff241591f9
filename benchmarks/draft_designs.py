"""Which draft to ship: designs trained on the same self-distillation data from the int8 target, measured alike.

Prints JSON: the data (tokens by source, seconds), and per design its parameters, training seconds, the native
milliseconds of one draft pass over a full window (onnxruntime, 2 threads, the int8 file), and acceptance per
draft position and tokens per pass for γ = 1..6 on the held-out chat prompts (``benchmarks/draft_prompts.json``,
64 new tokens), measured on the int8 ONNX file of each EAGLE design (Medusa: the module, it has no file). The data
is the committed corpus's first N shards (``--corpus N``, with the target's features over them: what ``make draft``
trains on) or the quick build's cached data (``draft/build.py``); the held-out answers are the build's own cache.

    .venv/bin/python -m benchmarks.draft_designs --target EXPORT_DIR [--corpus 4] \\
        [--designs eagle:1:2432:16384:2,window:16:2432:16384:2,medusa:0:0:16384:4] [--epochs 2]
        [--every 2] [--kinds chat,library] [--recipe lr=0.003,steps=3] [--soft] [--answers-only]

A design is ``name:window:mlp:readout:steps`` (``eagle``: the shipped one, window 1; ``window``: attention over W
rows; ``medusa``: ``steps`` is its number of heads); the variants are ``benchmarks/draft_variants.py``.
"""

import argparse
import json
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from tokenizers import Tokenizer

from draft import build, corpus, shipped
from draft import data as draft_data
from draft.export import to_onnx
from draft.heads import Eagle, Readout, parameters
from draft.simulate import report, windowed
from draft.target import Target
from draft.train import chunks, eagle_loss, fit, precision

from .draft_variants import Medusa, WindowEagle, answer_chunks, medusa_draft, medusa_loss, soft_loss

DEFAULT = "eagle:1:2432:16384:2,window:16:2432:16384:2,medusa:0:0:16384:4"


def pass_ms(data: bytes, window: int, d: int, repeats: int = 20) -> float:
    """Median milliseconds of one draft pass over ``window`` rows, natively at 2 threads."""
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
    session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    feeds = {"features": np.random.default_rng(0).normal(size=(1, window, d)).astype(np.float32),
             "tokens": np.arange(window, dtype=np.int64)[None]}
    session.run(None, feeds)
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - began)
    return round(1000 * float(np.median(times)), 2)


class FileStep:
    """An ONNX draft (bytes) as a ``simulate`` step."""

    def __init__(self, data: bytes):
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
        self.session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])

    def __call__(self, features, tokens):
        feature, argmax = self.session.run(["feature", "argmax"], {"features": features[None].astype(np.float32),
                                                                   "tokens": tokens[None].astype(np.int64)})
        return feature[0], argmax[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=Path, required=True)
    parser.add_argument("--designs", default=DEFAULT)
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--data", type=Path, help="a data file the build cached (cache/drafts/data/*.pkl) instead")
    parser.add_argument("--corpus", type=int, help="train on the committed corpus's first N shards instead")
    parser.add_argument("--soft", action="store_true", help="soft labels: the target's distribution (draft_variants)")
    parser.add_argument("--answers-only", action="store_true", help="train the answers' rows only (draft_variants)")
    parser.add_argument("--every", type=int, default=1, help="train on every k-th sequence of the data only")
    parser.add_argument("--kinds", help="train on these sources of the data only (comma-separated, data.SOURCES)")
    parser.add_argument("--recipe", default="", help="fields of train.Recipe to change, as name=value,...")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(2)
    log = lambda text: print(time.strftime("%H:%M:%S"), text, file=sys.stderr, flush=True)  # noqa: E731
    target = Target(args.target)
    plan = build.plan_for(target)
    tokenizer = Tokenizer.from_file(str(target.folder / "tokenizer.json"))
    if args.corpus:
        began = time.perf_counter()
        data = shipped.corpus_sequences(target, args.corpus, log=log)
        data_seconds = {"features": time.perf_counter() - began}
    elif args.data:
        data, data_seconds = pickle.loads(args.data.read_bytes())
    else:
        data, data_seconds = build._data(target, tokenizer, plan, log)
    runs = build._held_out(target, tokenizer, plan.held_out_tokens, log)
    recipe = shipped.RECIPE if args.corpus else plan.recipe
    recipe = recipe if args.epochs is None else replace(recipe, epochs=args.epochs)
    for change in filter(None, args.recipe.split(",")):
        name, value = change.split("=")
        kind = type(getattr(recipe, name))
        recipe = replace(recipe, **{name: value.lower() in ("1", "true", "yes") if kind is bool else kind(value)})
    kinds = set(args.kinds.split(",")) if args.kinds else set(draft_data.SOURCES) | set(corpus.SOURCES)
    keep = [k for k in range(0, len(data), args.every) if data.kinds[k] in kinds]
    data = draft_data.Sequences(*([field[k] for k in keep] for field in (data.ids, data.hidden, data.argmax,
                                                                         data.kinds, data.starts)))
    vocab = target.manifest["vocab_size"]
    answers = np.concatenate([ids[prompt:] for ids, _, prompt in runs])
    out = {"target": target.manifest["model"]["name"], "every": args.every, "kinds": sorted(kinds),
           "corpus_shards": args.corpus, "soft": args.soft, "answers_only": args.answers_only,
           "data": {"tokens": data.tokens(), "by_source": {k: sum(len(i) for i, s in zip(data.ids, data.kinds) if s == k)
                                                          for k in sorted(set(data.kinds))},
                                                               "seconds": {k: round(v) for k, v in data_seconds.items()}},
           "recipe": recipe.__dict__, "precision": precision(recipe), "designs": {}}
    for spec in args.designs.split(","):
        name, window, mlp, size, steps = spec.split(":")
        window, mlp, size, steps = int(window or 0), int(mlp or 0), int(size), int(steps)
        began = time.perf_counter()
        figures = {}
        ids = build.written_tokens(data, size, vocab)
        figures["held_out_coverage"] = round(float(np.isin(answers, ids).mean()), 3)
        readout = Readout(torch.from_numpy(build.word_rows(target.folder, ids)), torch.from_numpy(ids), vocab)
        pieces = (answer_chunks if args.answers_only else chunks)(data, recipe.length)
        torch.manual_seed(args.seed)
        if name == "medusa":
            model = Medusa(readout, steps)
            fit(model, data, recipe, seed=args.seed, log=log, loss=medusa_loss, pieces=pieces)
            figures["train_s"] = round(time.perf_counter() - began)
            figures["parameters"] = parameters(model)
            propose = lambda hidden, ids_, p, gamma, m=model: medusa_draft(m, hidden, p, gamma)  # noqa: E731
            figures["acceptance"] = report(propose, runs, range(1, steps + 1))
        else:
            heads, kv_heads = target.manifest["model"]["num_attention_heads"], target.kv["num_kv_heads"]
            model = WindowEagle(readout, heads, kv_heads, mlp, window) if name == "window" else Eagle(readout, mlp)
            fit(model, data, replace(recipe, steps=steps), seed=args.seed, log=log,
                loss=soft_loss if args.soft else eagle_loss, pieces=pieces)
            figures["train_s"] = round(time.perf_counter() - began)
            figures["parameters"] = parameters(model)
            graph = to_onnx(model, calibration=build.calibration(data, window))
            figures["onnx_mb"] = round(len(graph) / 1e6, 1)
            figures["pass_ms_native_2_threads"] = {n: pass_ms(graph, n, target.hidden_size)
                                                   for n in sorted({1, window})}
            figures["acceptance"] = report(windowed(FileStep(graph), window), runs)
        out["designs"][spec] = figures
        log(json.dumps({spec: figures}))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
