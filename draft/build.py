"""The draft's build, cached: target export -> self-distillation data -> readout subset -> training -> draft.onnx.

``build(export_dir, seed)`` returns ``<cache>/drafts/<target>-<key>/`` holding ``draft.onnx`` and ``draft.json``
(``export.py`` states the graph's interface), and ``answers.json``, the target's answers as a table to copy from
(``answers.py``). The key hashes the target's identity (its files' sha256), the
trainer's code (every module of this package, comments and docstrings aside: ``code_of``), the libraries that shape
the bytes, the seed and the plan, so a changed trainer or target gives a new folder, never a stale draft. The same
seed gives the same bytes.

The data (minutes of the target's passes) and the held-out reference (its greedy answers to the benchmark's
prompts) are cached apart, keyed by the target and the code that makes them, so a change to the trainer alone
re-trains without re-running the target.
"""

import hashlib
import importlib.metadata
import json
import os
import pickle
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from tokenizers import Tokenizer

from model_export.build import _exclusive as exclusive  # the exporter's one lock (public by use; renaming it would re-key every export)
from model_export.cache import cache_root, code_of, sha256_file

from . import answers as draft_answers
from . import data as draft_data
from .export import OnnxDraft, to_onnx
from .heads import Eagle, Readout, parameters
from .simulate import PROMPTS, held_out_runs, report, windowed
from onepass.backends.native import DraftUnavailable
from onepass.examples import chat
from onepass.seam import target_identity as identity

from .target import Target
from .train import Recipe, fit, precision

FORMAT = 1
HERE = Path(__file__).parent
_DATA_MODULES = ("data.py", "instructions.py", "target.py")
_LIBRARIES = ("torch", "onnx", "onnxruntime", "numpy", "tokenizers")
KEY_LENGTH = 16
ANSWERS = "answers.json"  # the target's own answers as a table to copy from (answers.py)


@dataclass(frozen=True)
class Design:
    """The shipped design (``heads.Eagle``): the best measured on the same data (benchmarks/FINDINGS.md, "More answers,
    bfloat16, and the designs again"): at the budget measured, attention over a window of 16 rows drafted no better
    than one row alone and cost 2.5 times more per pass natively (``benchmarks/draft_designs.py`` measures the
    variants)."""

    name: str = "eagle"
    mlp: int = 2432
    readout: int = 16384


@dataclass(frozen=True)
class Plan:
    data: draft_data.Plan
    design: Design
    recipe: Recipe
    held_out_tokens: int = 64  # new tokens per held-out prompt


# The real model's plan, sized on this machine when quiet (benchmarks/FINDINGS.md, "More answers, bfloat16" and
# "Prose answers"): the target's answers are what teach the draft (its chat answers alone did as well as with 3 times
# as much teacher-forced code), so most of the budget goes to them, prose as well as code (the draft drafted prose
# far worse): about 9.5 minutes of answers, half a minute of teacher-forced text, 1 of held-out answers, 9 of training
# under bfloat16: 20 minutes on an AMD processor without AMX; the previous plan (800 library requests, no prose)
# took 13 on an Intel one with AMX, which trains about twice as fast.
REAL = Plan(draft_data.Plan(instructions=-1, max_new=80, batch=16, forced_batch=4, code_tokens=8_000,
                            doc_tokens=4_000, length=256, library=600),
            Design(), Recipe(epochs=5))
# The tiny random model's: the whole path in seconds.
TINY = Plan(draft_data.Plan(instructions=6, max_new=12, batch=3, forced_batch=2, code_tokens=300, doc_tokens=100,
                            length=48),
            Design(mlp=32, readout=256), Recipe(epochs=1, batch=4, length=32), held_out_tokens=8)
TINY_HIDDEN = 256  # a target narrower than this is a test model: the tiny plan


def plan_for(target: Target) -> Plan:
    return TINY if target.hidden_size < TINY_HIDDEN else REAL


def code_fingerprint(names=None) -> str:
    digest = hashlib.sha256(str(FORMAT).encode())
    for path in sorted(HERE.glob("*.py")) if names is None else [HERE / n for n in names]:
        digest.update(path.name.encode() + b"\0" + code_of(path.read_text(encoding="utf-8")))
    libraries = {name: importlib.metadata.version(name) for name in _LIBRARIES}
    digest.update(json.dumps(libraries, sort_keys=True).encode())
    return digest.hexdigest()


def _key(payload: dict) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:KEY_LENGTH]


def draft_key(manifest: dict, seed: int, plan: Plan) -> str:
    return _key({"target": identity(manifest), "trainer": code_fingerprint(), "seed": seed, "plan": asdict(plan),
                 "precision": precision(plan.recipe)})


def slug(manifest: dict) -> str:
    name = manifest["model"]["name"].split(" (")[0]
    return "".join(c if c.isalnum() or c in "-." else "-" for c in name.lower())[:40]


def _cached(path: Path, make):
    """What ``make()`` returns, kept at ``path`` (pickled) for the next build."""
    with exclusive(path):
        if path.is_file():
            return pickle.loads(path.read_bytes())
        value = make()
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(pickle.dumps(value))
        os.replace(partial, path)
        return value


def word_rows(export: Path, ids: np.ndarray) -> np.ndarray:
    """The target's word-table rows for ``ids`` [S], as its own graph computes them (the int8 lookup of
    ``model.onnx``, which for a tied table is also its output layer's column): every node that depends on
    ``input_ids`` alone, run on ``ids``."""
    model = onnx.load(str(export / "model.onnx"))
    graph = model.graph
    inits = {i.name for i in graph.initializer}
    known, nodes = {"input_ids"}, []
    for node in graph.node:
        # Shapes of the lookup feed the position and mask arithmetic, not its values.
        if node.op_type == "Shape":
            continue
        if any(i in known for i in node.input) and all(i in known or i in inits or not i for i in node.input):
            nodes.append(node)
            known.update(node.output)
    inside = {id(n) for n in nodes}
    ends = [o for n in nodes for o in n.output if any(o in m.input for m in graph.node if id(m) not in inside)]
    if not ends:
        raise DraftUnavailable("could not find the model's word-table lookup")
    # The lookup is the first value that leaves the nodes fed by the ids alone (the first norm's Cast is next).
    wanted, kept = {ends[0]}, []
    for node in reversed(nodes):
        if wanted & set(node.output):
            kept.append(node)
            wanted.update(node.input)
    nodes = kept[::-1]
    used = {i for n in nodes for i in n.input}
    sub = onnx.helper.make_graph(nodes, "word_rows",
                                 [onnx.helper.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, [1, None])],
                                 [onnx.helper.make_tensor_value_info(ends[0], onnx.TensorProto.FLOAT, None)],
                                 [i for i in graph.initializer if i.name in used])
    sub_model = onnx.helper.make_model(sub, opset_imports=model.opset_import)
    session = ort.InferenceSession(sub_model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input_ids": ids[None].astype(np.int64)})[0][0]


def written_tokens(data: draft_data.Sequences, size: int, vocab: int) -> np.ndarray:
    """The readout's subset: the ``size`` tokens the target chooses most in ``data``, then, to fill it, the
    tokens most frequent in the data's texts; ties by id. Sorted by id."""
    chosen = np.bincount(np.concatenate(data.argmax), minlength=vocab).astype(np.float64)
    seen = np.bincount(np.concatenate(data.ids), minlength=vocab).astype(np.float64)
    # The target's choices first; the texts' counts, each worth less than one choice, only order the rest.
    score = chosen + seen / (seen.max() + 1)
    order = np.lexsort((np.arange(vocab), -score))
    return np.sort(order[:size])


def make_draft(target: Target, data: draft_data.Sequences, design: Design, recipe: Recipe, seed: int, log=print):
    """A trained design (the torch module) on ``data``."""
    torch.manual_seed(seed)
    vocab = target.manifest["vocab_size"]
    ids = written_tokens(data, design.readout, vocab)
    table = torch.from_numpy(word_rows(target.folder, ids))
    readout = Readout(table, torch.from_numpy(ids), vocab)
    model = Eagle(readout, design.mlp)
    fit(model, data, recipe, seed=seed, log=log)
    return model


def calibration(data: draft_data.Sequences, window: int = 1, count: int = 64) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` windows of training rows (the target's features, the next tokens), spread evenly over the data."""
    feeds = []
    for k in np.linspace(0, len(data) - 1, count).astype(int).tolist():
        ids, hidden = data.ids[k], data.hidden[k]
        start = max(0, len(ids) // 2 - window)
        end = min(len(ids) - 1, start + window)
        feeds.append((hidden[start:end].astype(np.float32)[None], ids[start + 1:end + 1][None]))
    return feeds


def data_key(manifest: dict, plan: Plan) -> str:
    # The chat template shapes every answer, and it lives outside this package (onepass.examples.chat).
    return _key({"target": identity(manifest), "code": code_fingerprint(_DATA_MODULES), "plan": asdict(plan.data),
                 "template": chat("{request}")})


def _data(target: Target, tokenizer, plan: Plan, log):
    key = data_key(target.manifest, plan)
    return _cached(cache_root() / "drafts" / "data" / f"{slug(target.manifest)}-{key}.pkl",
                   lambda: draft_data.make(target, tokenizer, plan.data, log))


def _held_out(target: Target, tokenizer, new_tokens: int, log):
    # The instructions do not shape the held-out answers; the target's runner, the tokenising and the walk do.
    key = _key({"target": identity(target.manifest), "code": code_fingerprint(("data.py", "target.py", "simulate.py")),
                "prompts": hashlib.sha256(PROMPTS.read_bytes()).hexdigest(), "new_tokens": new_tokens})

    def make():
        began = time.perf_counter()
        runs = held_out_runs(target, tokenizer, new_tokens)
        log(f"draft held-out: {len(runs)} greedy answers in {time.perf_counter() - began:.0f} s")
        return runs
    return _cached(cache_root() / "drafts" / "held-out" / f"{slug(target.manifest)}-{key}.pkl", make)


def build(export: Path | str, seed: int = 0, force: bool = False, log=print) -> Path:
    """Build the draft for the export at ``export`` (unless cached) and return its folder."""
    export = Path(export)
    target = Target(export)  # raises DraftUnavailable for a target that cannot teach a draft
    plan = plan_for(target)
    folder = cache_root() / "drafts" / f"{slug(target.manifest)}-{draft_key(target.manifest, seed, plan)}"
    if (folder / "draft.json").is_file() and not force:
        return folder
    with exclusive(folder):
        if (folder / "draft.json").is_file() and not force:
            return folder
        _build(target, plan, seed, folder, log)
    return folder


def _build(target: Target, plan: Plan, seed: int, folder: Path, log) -> None:
    torch.set_num_threads(2)
    began = time.perf_counter()
    tokenizer = Tokenizer.from_file(str(target.folder / "tokenizer.json"))
    data, data_seconds = _data(target, tokenizer, plan, log)
    runs = _held_out(target, tokenizer, plan.held_out_tokens, log)
    trained = time.perf_counter()
    model = make_draft(target, data, plan.design, plan.recipe, seed, log)
    train_seconds = time.perf_counter() - trained
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "draft.onnx").write_bytes(to_onnx(model, calibration=calibration(data)))
    answers = draft_answers.table(data)
    (partial / ANSWERS).write_text(json.dumps(answers, separators=(",", ":")) + "\n")
    info = {
        "format": FORMAT,
        "design": plan.design.name,
        "window": model.window,
        "hidden_size": target.hidden_size,
        "readout_size": plan.design.readout,
        "parameters": parameters(model),
        "target": {"identity": identity(target.manifest), "name": target.manifest["model"]["name"]},
        "files": [{"name": name, "size": (partial / name).stat().st_size, "sha256": sha256_file(partial / name)}
                  for name in ("draft.onnx", ANSWERS)],
        # "lookup+draft" copies from it where the text does not repeat (onepass/answers.py).
        "answers": {"file": ANSWERS, "rows": sum(len(rows) for rows in answers["rows"].values()),
                    **{k: answers[k] for k in ("orders", "min_count", "min_share", "sources")}},
        "training": {"seed": seed, "tokens": data.tokens(), "tokens_by_source": data.counts(),
                     "epochs": plan.recipe.epochs, "recipe": asdict(plan.recipe),
                     "precision": precision(plan.recipe), "mlp": plan.design.mlp,
                     "sources": draft_data.SOURCES,
                     "seconds": {"data": {k: round(v, 1) for k, v in data_seconds.items()},
                                 "train": round(train_seconds, 1)}},
    }
    (partial / "draft.json").write_text(json.dumps(info, indent=1) + "\n")
    # Acceptance of the file itself, on the held-out prompts (the benchmark's, never trained on).
    shipped = OnnxDraft(partial)
    info["acceptance"] = {"prompts": len(runs), "new_tokens": plan.held_out_tokens,
                          "by_gamma": report(windowed(shipped, shipped.window), runs)}
    info["training"]["seconds"]["total"] = round(time.perf_counter() - began, 1)
    (partial / "draft.json").write_text(json.dumps(info, indent=1) + "\n")
    log(f"draft: acceptance {json.dumps(info['acceptance']['by_gamma'])}")
    shutil.rmtree(folder, ignore_errors=True)
    os.replace(partial, folder)

