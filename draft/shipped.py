"""The draft that ships: trained once during development, committed with the source, assembled in the reader's build.

Training takes the target's passes over the whole corpus and many minutes of torch, so it is done once, by a
developer (``make draft``: ``train``), and its result committed in ``draft/shipped/``:

- ``weights.npz``: the trained parameters in float16, the readout's token ids and the activation peaks the int8
  conversion smooths with. Not the readout's rows: those are the target's own word table, which the build reads from
  the export (``build.word_rows``);
- ``draft.json``: what it was trained for and from, and what it measured: the target's identity and name, the
  corpus's shards and fingerprint (``corpus.fingerprint``), the trainer's fingerprint, the processor, the arithmetic,
  the design and recipe, the seconds, the held-out acceptance of the assembled int8 file per draft position, and the
  losses of a small slice's first steps (``slice``), which ``tests/test_draft_shipped.py`` retrains and compares.

The reader's build (``python -m draft --target EXPORT``, which ``make model`` runs) trains nothing: ``assemble``
joins the committed weights with the export's word table into ``draft.onnx`` (seconds) and makes the table of the
target's answers from the committed corpus (``answers.py``). An export whose identity differs from the one the draft
was trained for (another exporter, another library) is measured first (held-out α natively, a minute or two) and
ships only if it accepts within ``TOLERANCE`` of the committed figure: never silently worse. A processor whose native
int8 saturates (no VNNI) cannot measure it (natively it computes another model than the tab's): there the draft
ships with its committed figures and its ``draft.json`` says it was not measured.
"""

import hashlib
import inspect
import io
import json
import shutil
import textwrap
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from onepass.backends.native import DraftUnavailable, NativeModel
from onepass.seam import target_identity
from tokenizers import Tokenizer

from model_export.build import _exclusive as exclusive
from model_export.cache import cache_root, code_of, sha256_file, write_whole
from model_export.check import native_int8_products_exact

from . import answers as draft_answers
from . import corpus
from .build import ANSWERS, FORMAT, Design, _held_out, calibration, code_fingerprint, slug, word_rows, written_tokens
from .data import Sequences, aligned_batches, forced
from .export import OnnxDraft, activation_peaks, float_graph, to_onnx
from .heads import Eagle, Readout, parameters
from .simulate import report, windowed
from .target import Target
from .train import Recipe, fit, precision

SHIPPED = Path(__file__).parent / "shipped"
WEIGHTS = "weights.npz"
MANIFEST = "draft.json"
TOLERANCE = 0.02  # held-out α at γ = 1 an export may lose against the committed figure and still ship the draft
FORCED_BATCH = 8  # texts a teacher-forced pass
HELD_OUT_TOKENS = 64
DESIGN = Design()  # the design measured best (build.Design)
# One unrolled step: at γ = 1, the default, the draft always reads the target's own features (benchmarks/FINDINGS.md,
# "One unrolled step or two, on equal data": α 0.519 against 0.491 with two, on the 12 shards).
RECIPE = Recipe(epochs=3, steps=1)
SLICE = {"shards": 1, "steps": 40}  # what the opt-in test retrains: its losses are recorded
_ASSEMBLY_MODULES = ("shipped.py", "export.py", "heads.py", "answers.py", "build.py")
# What runs the target's teacher-forced passes over a shard: a change to any of them re-keys the features' cache.
_FEATURE_CODE = (forced, aligned_batches, Target.run, NativeModel.batch, NativeModel.feeds)


def manifest(folder: Path = SHIPPED) -> dict | None:
    path = folder / MANIFEST
    return json.loads(path.read_text()) if path.is_file() else None


def sequences(target: Target, texts: list[corpus.Text], log=print) -> Sequences:
    """The target's features and choices over the corpus's texts, in one teacher-forced pass a few texts."""
    began = time.perf_counter()
    data = Sequences()
    forced(target, [(t.ids.tolist(), t.prompt) for t in texts], [t.source for t in texts], data, FORCED_BATCH)
    log(f"draft: the target's features over {data.tokens():,} tokens in {time.perf_counter() - began:.0f} s")
    return data


def features_key(target: Target, path: Path) -> str:
    """What a shard's features are made from: the target (what it computes, onnxruntime's version included), the
    shard's bytes and the code of the passes themselves (``_FEATURE_CODE``), not of the modules around them, so that
    an unrelated edit does not throw away hours of passes."""
    digest = hashlib.sha256(target_identity(target.manifest).encode())
    digest.update(sha256_file(path).encode())
    for function in _FEATURE_CODE:
        digest.update(code_of(textwrap.dedent(inspect.getsource(function))))
    return digest.hexdigest()[:16]


def shard_sequences(target: Target, path: Path, log=print, folder: Path | None = None) -> Sequences:
    """The target's features and choices over one committed shard, kept in ``<cache>/features/`` (float16, about
    150 MB a shard of the default model) so that training on many shards can be prepared a shard at a time, over
    several sittings (``python -m draft --target EXPORT --features``), and a retraining with another recipe or on
    more shards asks the target again only for what is new. A text's features do not depend on the texts passed
    beside it (``data.aligned_batches``), so a shard's are the same alone as amid the whole corpus, bit for bit.

    Only a processor whose native int8 is the tab's arithmetic keeps what it makes (``native_int8_products_exact``:
    elsewhere the kernel saturates and the features are another model's); any processor reads what one kept, so a
    draft made ready on one processor trains on another."""
    folder = cache_root() / "features" if folder is None else folder
    texts = corpus.shard_texts(corpus.read_shard(path))
    stem = f"{slug(target.manifest)}-{path.name.split('.')[0]}"
    kept = folder / f"{stem}-{features_key(target, path)}.npz"
    lengths = [len(t.ids) for t in texts]
    if kept.is_file():
        try:
            with np.load(kept) as arrays:
                # Each read of an npz member decompresses it whole again: read each once.
                found, argmax, hidden = arrays["lengths"].tolist(), arrays["argmax"], arrays["hidden"]
            if found == lengths and len(hidden) == len(argmax) == sum(lengths):
                data = Sequences()
                for t, end, length in zip(texts, np.cumsum(lengths), lengths):
                    data.add(t.ids, argmax[end - length:end], hidden[end - length:end], t.source, t.prompt)
                log(f"draft: the target's features over {path.name} from the cache")
                return data
        except (OSError, ValueError, KeyError):
            pass  # damaged: made again below
        log(f"draft: {kept.name} in the cache does not hold {path.name}'s features: made again")
    data = sequences(target, texts, log)
    if not native_int8_products_exact():
        log(f"draft: this processor's native int8 saturates (no VNNI): {path.name}'s features are not the tab's "
            "model's, and are not kept")
        return data
    buffer = io.BytesIO()
    np.savez(buffer, lengths=np.asarray(lengths, np.int64), argmax=np.concatenate(data.argmax).astype(np.int32),
             hidden=np.concatenate(data.hidden))
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob(f"{stem}-*.npz"):
        stale.unlink(missing_ok=True)  # the same shard's features for another target or code: one kept a shard
    write_whole(kept, buffer.getvalue())
    return data


def corpus_sequences(target: Target, shards: int | None = None, texts_dir: Path = corpus.CORPUS, log=print,
                     folder: Path | None = None) -> Sequences:
    """The target's features and choices over the first ``shards`` committed shards (all: None), in order, each
    shard's from the cache where it holds them (``shard_sequences``)."""
    corpus.load(shards, texts_dir, model=target.manifest["model"]["name"])  # one model's, one template's
    data = Sequences()
    for path in corpus.paths(shards, texts_dir):
        data.extend(shard_sequences(target, path, log, folder))
    return data


def _model(target: Target, ids: np.ndarray, design: Design) -> Eagle:
    readout = Readout(torch.from_numpy(word_rows(target.folder, ids)), torch.from_numpy(ids),
                      target.manifest["vocab_size"])
    return Eagle(readout, design.mlp)


def _trained(model: Eagle) -> dict[str, torch.Tensor]:
    """The parameters training changed: the module's state without the readout (the target's own table)."""
    return {name: value for name, value in model.state_dict().items() if not name.startswith("readout.")}


def save(model: Eagle, peaks: dict[str, np.ndarray], folder: Path) -> None:
    arrays = {f"w/{name}": value.detach().numpy().astype(np.float16) for name, value in _trained(model).items()}
    arrays["readout_ids"] = model.readout.ids.numpy().astype(np.int64)
    arrays.update({f"peak/{name}": peak.astype(np.float32) for name, peak in peaks.items()})
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    (folder / WEIGHTS).write_bytes(buffer.getvalue())


def load(target: Target, design: Design, folder: Path = SHIPPED) -> tuple[Eagle, dict[str, np.ndarray]]:
    """The committed draft as a module over ``target``'s word table, and its activation peaks."""
    with np.load(folder / WEIGHTS) as arrays:
        model = _model(target, arrays["readout_ids"], design)
        state = {name[2:]: torch.from_numpy(arrays[name].astype(np.float32)) for name in arrays if name.startswith("w/")}
        peaks = {name[5:]: arrays[name] for name in arrays if name.startswith("peak/")}
    missing = set(_trained(model)) ^ set(state)
    if missing:
        raise DraftUnavailable(f"the committed draft's weights do not fit its design: {sorted(missing)}")
    model.load_state_dict({**model.state_dict(), **state})
    return model.eval(), peaks


def train(export: Path, shards: int | None = None, seed: int = 0, out: Path = SHIPPED, texts_dir: Path = corpus.CORPUS,
          design: Design = DESIGN, recipe: Recipe = RECIPE, log=print) -> dict:
    """Train the draft on the first ``shards`` of the corpus in ``texts_dir`` (all: None) and write it to ``out``;
    returns its manifest. The tests train the tiny model's in seconds with a design and recipe of its size."""
    torch.set_num_threads(2)
    began = time.perf_counter()
    # Without onnxruntime's arena: it kept what the widest teacher-forced pass grew it to, and 6 shards' features
    # took 20.9 GB at the peak (benchmarks/FINDINGS.md, "The draft on nine shards").
    target = Target(export, arena=False)
    identity = target_identity(target.manifest)
    texts = corpus.load(shards, texts_dir, model=target.manifest["model"]["name"])
    data = corpus_sequences(target, shards, texts_dir, log)
    target.model = None  # the session's own memory, before torch trains
    torch.manual_seed(seed)
    model = _model(target, written_tokens(data, design.readout, target.manifest["vocab_size"]), design)
    trained = time.perf_counter()
    history = fit(model, data, recipe, seed=seed, log=log)
    train_seconds = time.perf_counter() - trained
    # What ships is float16: the peaks are measured on the rounded weights, so the file measured below is the file.
    model.load_state_dict({**model.state_dict(), **{k: v.half().float() for k, v in _trained(model).items()}})
    peaks = activation_peaks(float_graph(model), calibration(data))
    out.mkdir(parents=True, exist_ok=True)
    save(model, peaks, out)
    info = {
        "format": FORMAT,
        "design": asdict(design),
        "target": {"identity": identity, "name": target.manifest["model"]["name"]},
        "data": {"shards": len(sorted(texts_dir.glob("shard-*.json.gz"))[:shards]), "texts": len(texts),
                 "fingerprint": corpus.fingerprint(shards, texts_dir), "tokens": data.tokens(), "tokens_by_source":
                 {s: sum(len(t.ids) for t in texts if t.source == s) for s in corpus.SOURCES},
                 "sources": corpus.SOURCES},
        "training": {"seed": seed, "recipe": asdict(recipe), "precision": precision(recipe),
                     "processor": corpus.processor(), "trainer": code_fingerprint(),
                     "losses": [list(h) for h in history[:3]] + [list(history[-1])],
                     "seconds": {"features": round(trained - began, 1), "train": round(train_seconds, 1)}},
        "weights": {"file": WEIGHTS, "size": (out / WEIGHTS).stat().st_size, "sha256": sha256_file(out / WEIGHTS)},
    }
    first = len(corpus.load(SLICE["shards"], texts_dir))
    info["slice"] = {**SLICE, "losses": slice_losses(target, texts_dir, design, recipe, seed, log,
                                                      data=Sequences(*(rows[:first] for rows in (
                                                          data.ids, data.hidden, data.argmax, data.kinds, data.starts))))}
    (out / MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
    folder = assemble(export, out, texts_dir, measure=True, log=log)
    info["acceptance"] = json.loads((folder / MANIFEST).read_text())["acceptance"]
    info["training"]["seconds"]["total"] = round(time.perf_counter() - began, 1)
    (out / MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
    log(f"draft: trained in {info['training']['seconds']['total']:.0f} s, held-out α "
        f"{info['acceptance']['by_gamma']['1']['alpha'][0]} at γ = 1")
    return info


def slice_losses(target: Target, texts_dir: Path = corpus.CORPUS, design: Design = DESIGN,
                 recipe: Recipe = RECIPE, seed: int = 0, log=print, data: Sequences | None = None) -> list[list[float]]:
    """The losses of the recipe's first ``SLICE["steps"]`` steps on the first ``SLICE["shards"]`` shards (``data``:
    the target's features over them, when already computed)."""
    if data is None:
        data = corpus_sequences(target, SLICE["shards"], texts_dir, log)
    torch.manual_seed(seed)
    model = _model(target, written_tokens(data, design.readout, target.manifest["vocab_size"]), design)
    history = fit(model, data, recipe, seed=seed, log=lambda message: None, max_steps=SLICE["steps"])
    return [[round(loss, 4), round(ce, 4)] for _, loss, ce in history]


def _key(target: Target, folder: Path, texts_dir: Path) -> str:
    digest = hashlib.sha256(target_identity(target.manifest).encode())
    digest.update(code_fingerprint(_ASSEMBLY_MODULES).encode())
    for name in (WEIGHTS, MANIFEST):
        digest.update(hashlib.sha256((folder / name).read_bytes()).digest())
    digest.update(corpus.fingerprint(manifest(folder)["data"]["shards"], texts_dir).encode())
    return digest.hexdigest()[:16]


def assemble(export: Path, folder: Path = SHIPPED, texts_dir: Path = corpus.CORPUS, measure: bool = False,
             log=print) -> Path:
    """The committed draft as the site ships it, for the export at ``export``: ``<cache>/drafts/<model>-<key>/``.

    Raises ``DraftUnavailable`` where there is no committed draft for this model, or where this export is another
    build of it and the draft accepts less than ``TOLERANCE`` below its committed figure there.
    """
    target = Target(export)
    shipped = manifest(folder)
    if shipped is None or shipped["target"]["name"] != target.manifest["model"]["name"]:
        raise DraftUnavailable(f"no committed draft for {target.manifest['model']['name']}")
    out = cache_root() / "drafts" / f"{slug(target.manifest)}-shipped-{_key(target, folder, texts_dir)}"
    if (out / MANIFEST).is_file() and not measure:
        return out
    with exclusive(out):
        if (out / MANIFEST).is_file() and not measure:
            return out
        _assemble(target, shipped, folder, texts_dir, out, measure, log)
    return out


def _assemble(target: Target, shipped: dict, folder: Path, texts_dir: Path, out: Path, measure: bool, log) -> None:
    began = time.perf_counter()
    design = Design(**shipped["design"])
    model, peaks = load(target, design, folder)
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    (partial / "draft.onnx").write_bytes(to_onnx(model, peaks=peaks))
    texts = corpus.load(shipped["data"]["shards"], texts_dir)
    if corpus.fingerprint(shipped["data"]["shards"], texts_dir) != shipped["data"]["fingerprint"]:
        raise DraftUnavailable("the committed corpus is not the one the draft was trained on")
    table = draft_answers.table_of_texts([(t.ids, t.prompt) for t in texts])
    (partial / ANSWERS).write_text(json.dumps(table, separators=(",", ":")) + "\n")
    identity = target_identity(target.manifest)
    info = {
        "format": FORMAT, "design": design.name, "window": model.window, "hidden_size": target.hidden_size,
        "readout_size": design.readout, "parameters": parameters(model),
        "target": {"identity": identity, "name": target.manifest["model"]["name"]},
        "files": [{"name": name, "size": (partial / name).stat().st_size, "sha256": sha256_file(partial / name)}
                  for name in ("draft.onnx", ANSWERS)],
        "answers": {"file": ANSWERS, "rows": sum(len(rows) for rows in table["rows"].values()),
                    **{k: table[k] for k in ("orders", "min_count", "min_share", "sources")}},
        "training": {"shipped": True, "seed": shipped["training"]["seed"], "tokens": shipped["data"]["tokens"],
                     "tokens_by_source": shipped["data"]["tokens_by_source"], "sources": shipped["data"]["sources"],
                     "recipe": shipped["training"]["recipe"], "precision": shipped["training"]["precision"],
                     "processor": shipped["training"]["processor"], "mlp": design.mlp,
                     "trained_for": shipped["target"]["identity"]},
    }
    if "acceptance" in shipped:
        info["acceptance"] = shipped["acceptance"]
    (partial / MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
    other = identity != shipped["target"]["identity"]
    if other and not measure and not native_int8_products_exact():
        # Natively this processor computes another model than the tab's (its int8 kernel saturates), so what it
        # measured would say nothing of the tab's acceptance: the draft ships with the committed figure, saying so,
        # and the reader's own run in step 6 measures it in the tab.
        info["acceptance"] = {**shipped.get("acceptance", {}), "measured_here": False,
                              "why": "this processor's native int8 saturates (no VNNI), so it cannot measure the draft"}
        log("draft: this export differs from the one the draft was trained for, and this processor cannot measure it "
            "natively (no VNNI): shipped with its committed figures, unmeasured here")
    elif measure or other:
        info["acceptance"] = _measure(target, partial, log)
        info["acceptance"]["measured_here"] = True
        if "acceptance" in shipped and other:
            here, committed = info["acceptance"]["by_gamma"]["1"]["alpha"][0], shipped["acceptance"]["by_gamma"]["1"]["alpha"][0]
            if here < committed - TOLERANCE:
                shutil.rmtree(partial)
                raise DraftUnavailable(f"this export is another build of {shipped['target']['name']} than the draft "
                                       f"was trained for, and the draft accepts {here:.3f} of its drafts there against "
                                       f"{committed:.3f}: retrain it (make draft)")
            log(f"draft: this export differs from the one the draft was trained for; held-out α {here:.3f} here, "
                f"{committed:.3f} committed: shipped")
    info["assembly_seconds"] = round(time.perf_counter() - began, 1)
    (partial / MANIFEST).write_text(json.dumps(info, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    partial.rename(out)


def _measure(target: Target, folder: Path, log) -> dict:
    """Held-out acceptance of the assembled file, natively: the benchmark's prompts, never trained on."""
    tokenizer = Tokenizer.from_file(str(target.folder / "tokenizer.json"))
    runs = _held_out(target, tokenizer, HELD_OUT_TOKENS, log)
    draft = OnnxDraft(folder)
    return {"prompts": len(runs), "new_tokens": HELD_OUT_TOKENS, "by_gamma": report(windowed(draft, draft.window), runs)}

