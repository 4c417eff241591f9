"""The native backend: onnxruntime on the CPU, fed exactly as the browser feeds onnxruntime-web.

Everything about the model comes from the export's ``manifest.json``: input and
output names, the KV-cache layout, end-of-text ids, vocabulary size, top-k.
A pass fetches the argmax, the top-k and the new KV cache, and the logits only
when asked (they are 151,936 floats per position).
"""

import json
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort

from ..seam import Facts, Pass

THREADS = 2


class NativeModel:
    """One onnxruntime session over an export folder; opens one ``Session`` per text."""

    def __init__(self, folder: Path | str, threads: int = THREADS):
        folder = Path(folder)
        manifest_path = folder / "manifest.json"
        if not manifest_path.is_file():
            raise FileNotFoundError(f"no manifest.json in {folder}: not a model export")
        self.manifest = json.loads(manifest_path.read_text())
        self.facts = Facts.from_manifest(self.manifest)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.onnx = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
        kv = self.manifest["kv"]
        layers = range(kv["num_layers"])
        self.past_names = [kv[name].format(i=i) for i in layers for name in ("input_key", "input_value")]
        self.present_names = [kv[name].format(i=i) for i in layers for name in ("output_key", "output_value")]
        self.empty_past = np.zeros((1, kv["num_kv_heads"], 0, kv["head_dim"]), np.float32)

    def session(self, kv_cache: bool = True) -> "CachedSession | UncachedSession":
        return CachedSession(self) if kv_cache else UncachedSession(self)

    def run(self, ids: list[int], past: list[np.ndarray] | None, logits: bool) -> tuple[Pass, list[np.ndarray]]:
        """One pass over ``ids`` after ``past`` (None: nothing before); returns the pass and the new KV cache."""
        past = past or [self.empty_past] * len(self.past_names)
        start = past[0].shape[2]
        names, outputs = self.manifest["inputs"], self.manifest["outputs"]
        feeds = {
            names["input_ids"]: np.array([ids], np.int64),
            names["attention_mask"]: np.ones((1, start + len(ids)), np.int64),
            names["position_ids"]: np.arange(start, start + len(ids), dtype=np.int64)[None],
            **dict(zip(self.past_names, past)),
        }
        fetch = [outputs["argmax"], outputs["topk_ids"], outputs["topk_probs"], *self.present_names]
        fetch += [outputs["logits"]] if logits else []
        began = time.perf_counter()
        values = self.onnx.run(fetch, feeds)
        seconds = time.perf_counter() - began
        argmax, topk_ids, topk_probs = values[:3]
        result = Pass(argmax=argmax[0].tolist(), topk_ids=topk_ids[0].tolist(), topk_probs=topk_probs[0].tolist(),
                      seconds=seconds, logits=values[-1][0].tolist() if logits else None)
        return result, values[3:3 + len(self.present_names)]


class CachedSession:
    """KV cache on: a pass processes only the new tokens; rollback slices the cache."""

    def __init__(self, model: NativeModel):
        self.model = model
        self.past: list[np.ndarray] | None = None
        self.length = 0

    async def forward(self, new_ids: list[int], *, logits: bool = False) -> Pass:
        result, self.past = self.model.run(new_ids, self.past, logits)
        self.length += len(new_ids)
        return result

    def rollback(self, length: int) -> None:
        if length < self.length:
            # Sequence is axis 2 of [batch, kv_heads, sequence, head_dim]; onnxruntime wants contiguous inputs.
            self.past = [np.ascontiguousarray(tensor[:, :, :length]) for tensor in self.past]
            self.length = length


class UncachedSession:
    """KV cache off: every pass re-reads the whole text so far, as the original station did."""

    def __init__(self, model: NativeModel):
        self.model = model
        self.ids: list[int] = []

    @property
    def length(self) -> int:
        return len(self.ids)

    async def forward(self, new_ids: list[int], *, logits: bool = False) -> Pass:
        self.ids += new_ids
        full, _ = self.model.run(self.ids, None, logits)
        # Return the rows of the new tokens only, so both cache modes look the same to the algorithms.
        rows = slice(len(self.ids) - len(new_ids), None)
        return Pass(argmax=full.argmax[rows], topk_ids=full.topk_ids[rows], topk_probs=full.topk_probs[rows],
                    seconds=full.seconds, logits=full.logits[rows] if logits else None)

    def rollback(self, length: int) -> None:
        del self.ids[length:]
