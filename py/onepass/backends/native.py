"""The native backend: onnxruntime on the CPU, fed exactly as the browser feeds onnxruntime-web.

Everything about the model comes from the export's ``manifest.json``: input and
output names, the KV-cache layout, end-of-text ids, vocabulary size, top-k.
A pass fetches the argmax, the top-k and the new KV cache, and the logits and the
hidden states (the features a draft model reads) only when asked.

``NativeDraft`` runs a draft model the same way (a folder with ``draft.onnx`` and
``draft.json``, built by ``python -m draft``, and the table of the target's own
answers in ``answers.json``), behind ``draft_model.DraftModel``:
a small pass feeds the last n (feature, token) pairs as ``features`` [1, n, d]
and ``tokens`` [1, n]; the drafted loop needs the last row's predicted
``feature`` and ``argmax`` (a full-vocabulary id).
"""

import json
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..answers import Answers
from ..draft_model import DraftStep
from ..seam import Facts, Pass, target_identity
from .sessions import CachedSession, UncachedSession

THREADS = 2
TOP_K = 10  # a draft's q for sampling: its most likely tokens, as many as the target's top k


def session_options(threads: int, spinning: bool = True, arena: bool = True) -> ort.SessionOptions:
    """``threads`` for one pass's operators; ``spinning``: whether the pool's idle threads busy-wait for the next
    operator (onnxruntime's default), which is faster for a session that runs pass after pass; ``arena``: whether
    the session keeps the memory its widest pass grew to (onnxruntime's default) or gives each pass's back."""
    options = ort.SessionOptions()
    options.enable_cpu_mem_arena = arena
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    return options


class NativeModel:
    """One onnxruntime session over an export folder; opens one ``Session`` per text.

    The graph is the one the manifest names (the file the pages load); ``file`` picks another graph of the
    same export (the float32 reference, for quality checks). A graph without the ``first_row`` input always
    returns every row.
    """

    def __init__(self, folder: Path | str, threads: int = THREADS, file: str | None = None, arena: bool = True):
        folder = Path(folder)
        manifest_path = folder / "manifest.json"
        if not manifest_path.is_file():
            raise FileNotFoundError(f"no manifest.json in {folder}: not a model export")
        self.manifest = json.loads(manifest_path.read_text())
        self.facts = Facts.from_manifest(self.manifest)
        graph = folder / (file or self.manifest["graph"])
        self.onnx = ort.InferenceSession(str(graph), session_options(threads, arena=arena), providers=["CPUExecutionProvider"])
        self.first_row = self.manifest["inputs"].get("first_row")
        if self.first_row not in {i.name for i in self.onnx.get_inputs()}:
            self.first_row = None
        self.output_names = {o.name for o in self.onnx.get_outputs()}
        kv = self.manifest["kv"]
        layers = range(kv["num_layers"])
        self.past_names = [kv[name].format(i=i) for i in layers for name in ("input_key", "input_value")]
        self.present_names = [kv[name].format(i=i) for i in layers for name in ("output_key", "output_value")]
        self.empty_past = np.zeros((1, kv["num_kv_heads"], 0, kv["head_dim"]), np.float32)

    def session(self, kv_cache: bool = True) -> CachedSession | UncachedSession:
        return CachedSession(self) if kv_cache else UncachedSession(self)

    def feeds(self, ids: np.ndarray, past: list[np.ndarray] | None, pad: np.ndarray | None = None) -> dict:
        """The graph's inputs for one pass over ``ids`` [B, n] after ``past`` (None: nothing before).

        ``pad`` [B]: how many of each row's first positions (of the whole text so far) are left padding, which the
        attention mask hides and the position ids skip (several texts decoded together: ``batch``).
        """
        batch, n = ids.shape
        past = past or [np.zeros((batch, *self.empty_past.shape[1:]), np.float32)] * len(self.past_names)
        start = past[0].shape[2]
        pad = np.zeros(batch, np.int64) if pad is None else pad
        everything = np.arange(start + n)
        names = self.manifest["inputs"]
        return {
            names["input_ids"]: ids.astype(np.int64),
            names["attention_mask"]: (everything[None, :] >= pad[:, None]).astype(np.int64),
            names["position_ids"]: np.maximum(everything[None, start:] - pad[:, None], 0).astype(np.int64),
            **dict(zip(self.past_names, past)),
        }

    def batch(self, ids: np.ndarray, past: list[np.ndarray] | None = None, pad: np.ndarray | None = None):
        """One pass over several texts at once (``feeds``), every row predicted: the argmax [B, n], the hidden
        states [B, n, d] and the new KV cache. The draft's trainer reads the target through it."""
        feeds = self.feeds(ids, past, pad)
        if self.first_row:
            feeds[self.first_row] = np.array([0], np.int64)
        outputs = self.manifest["outputs"]
        values = self.onnx.run([outputs["argmax"], self.hidden_output(), *self.present_names], feeds)
        return values[0], values[1], values[2:]

    def outputs(self, ids: list[int], past: list[np.ndarray] | None, *, logits: bool,
                first_row: int = 0, hidden: bool = False) -> tuple[dict, list[np.ndarray], float]:
        """One pass over ``ids`` after ``past`` (None: nothing before), predictions from row ``first_row`` of
        the pass on; returns the outputs by name (argmax, top-k, logits and every row's hidden state when
        asked), the new KV cache and the pass's seconds."""
        outputs = self.manifest["outputs"]
        feeds = self.feeds(np.array([ids], np.int64), past)
        if self.first_row:
            feeds[self.first_row] = np.array([first_row], np.int64)
        fetch = [outputs["argmax"], outputs["topk_ids"], outputs["topk_probs"], *([outputs["logits"]] if logits else [])]
        fetch = [name for name in fetch if name in self.output_names]  # the reference graph has logits alone
        if hidden:
            fetch.append(self.hidden_output())
        began = time.perf_counter()
        values = self.onnx.run(fetch + self.present_names, feeds)
        seconds = time.perf_counter() - began
        found = {name: value[0] for name, value in zip(fetch, values)}
        if not self.first_row:
            found = {name: value[first_row:] if name != outputs.get("hidden") else value
                     for name, value in found.items()}
        return found, values[len(fetch):], seconds

    def hidden_output(self) -> str:
        """The graph's hidden-state output; exports made before it existed have none, and so no draft."""
        name = self.manifest["outputs"].get("hidden")
        if name not in self.output_names:
            raise ValueError("this export has no hidden-state output (made before drafts existed): rebuild it "
                             "with python -m model_export")
        return name

    def run(self, ids: list[int], past: list[np.ndarray] | None, logits: bool,
            first_row: int = 0, hidden: int = 0) -> tuple[Pass, list[np.ndarray]]:
        """``outputs`` as a ``Pass`` of plain lists (the features of the last ``hidden`` ids), and the new KV
        cache."""
        found, present, seconds = self.outputs(ids, past, logits=logits, first_row=first_row, hidden=hidden > 0)
        out = self.manifest["outputs"]
        result = Pass(argmax=found[out["argmax"]].tolist(), topk_ids=found[out["topk_ids"]].tolist(),
                      topk_probs=found[out["topk_probs"]].tolist(), seconds=seconds,
                      logits=found[out["logits"]].tolist() if logits else None,
                      hidden=found[out["hidden"]][len(ids) - hidden:].tolist() if hidden else None)
        return result, present

    def cut(self, past: list[np.ndarray], length: int) -> list[np.ndarray]:
        """The KV cache as it was after ``length`` tokens."""
        # Sequence is axis 2 of [batch, kv_heads, sequence, head_dim]; onnxruntime wants contiguous inputs.
        return [np.ascontiguousarray(tensor[:, :, :length]) for tensor in past]


class DraftUnavailable(Exception):
    """No draft for this model: the folder holds none, or one made for another model."""


class NativeDraft:
    def __init__(self, folder: Path | str, threads: int = THREADS, target: dict | None = None):
        folder = Path(folder)
        if not (folder / "draft.json").is_file():
            raise DraftUnavailable(f"no draft.json in {folder}: build a draft with python -m draft --target EXPORT")
        self.manifest = json.loads((folder / "draft.json").read_text())
        if target is not None and self.manifest["target"]["identity"] != target_identity(target):
            raise DraftUnavailable(f"the draft in {folder} was trained for another model "
                                   f"({self.manifest['target'].get('name')})")
        self.window = int(self.manifest["window"])
        self.top_k = int(self.manifest.get("top_k", TOP_K))
        # The draft's small passes alternate with the target's: a spinning idle thread of the draft's pool would
        # take the core the target's next pass needs, and the drafted loop ran at 0.63x of one at a time instead
        # of 1.09x (benchmarks/FINDINGS.md, "Where a drafted round's time went natively").
        self.onnx = ort.InferenceSession(str(folder / self.manifest.get("graph", "draft.onnx")),
                                         session_options(threads, spinning=False), providers=["CPUExecutionProvider"])
        answers = self.manifest.get("answers")
        self.answers = Answers(json.loads((folder / answers["file"]).read_text())) if answers else None

    async def step(self, features: list[list[float]], tokens: list[int], *, sampling: bool = False) -> DraftStep:
        """One small pass; for ``sampling`` also its ``top_k`` most likely tokens and their probabilities (q)."""
        feeds = {"features": np.array([features], np.float32), "tokens": np.array([tokens], np.int64)}
        began = time.perf_counter()
        if not sampling:
            feature, argmax, confidence = self.onnx.run(["feature", "argmax", "confidence"], feeds)
            return DraftStep(feature=feature[0, -1].tolist(), token=int(argmax[0, -1]),
                             seconds=time.perf_counter() - began, confidence=float(confidence[0, -1]))
        feature, argmax, probs, vocab, confidence = self.onnx.run(["feature", "argmax", "probs", "vocab",
                                                                   "confidence"], feeds)
        seconds = time.perf_counter() - began
        last = probs[0, -1]
        top = np.argsort(-last, kind="stable")[:self.top_k]
        return DraftStep(feature=feature[0, -1].tolist(), token=int(argmax[0, -1]), seconds=seconds,
                         ids=vocab[top].tolist(), probs=last[top].tolist(), confidence=float(confidence[0, -1]))
