"""The shipped int8 target, run natively: its features and its own argmax at every position.

The draft learns from exactly what the site runs: ``model.ort`` of an export folder, run through the native
backend's own ``NativeModel`` (``py/onepass/backends/native.py``: one feed-builder for the pages' passes and the
trainer's), whose ``batch`` pass also returns the graph's ``hidden`` output (the manifest's ``outputs.hidden``): the
final norm's output at every fed position, the input of the output layer. A target without that output, or with two
word tables, cannot teach a draft: ``DraftUnavailable``.

Several texts run in one pass left-padded to one length; a padded row is computed exactly as a batch of one computes
it where its padding is a multiple of the attention product's blocks (``data.aligned_batches`` groups texts so).
"""

import json
from pathlib import Path

import numpy as np
from onepass.backends.native import DraftUnavailable, NativeModel


class Target:
    def __init__(self, folder: Path | str, threads: int = 2, arena: bool = True):
        """``arena``: False for passes of many widths (teacher-forced texts), whose memory onnxruntime's arena would
        keep at the widest's size and then some (``native.session_options``)."""
        self.folder = Path(folder)
        path = self.folder / "manifest.json"
        if not path.is_file():
            raise DraftUnavailable(f"no manifest.json in {self.folder}: not a model export")
        self.manifest = json.loads(path.read_text())
        if not self.manifest["outputs"].get("hidden"):
            raise DraftUnavailable("the model's export has no 'hidden' output, so no draft can learn from it")
        model = self.manifest["model"]
        if model.get("word_tables", {}).get("tables", 2 if not model.get("tied_embeddings") else 1) != 1:
            raise DraftUnavailable("the draft reads and writes through the model's one word table; this model has two")
        self.model = NativeModel(self.folder, threads, arena=arena)
        self.kv = self.manifest["kv"]
        self.hidden_size = model["hidden_size"]
        self.eos = set(self.manifest["eos_ids"])

    def run(self, ids: np.ndarray, past: list[np.ndarray] | None = None, pad: np.ndarray | None = None):
        """One pass over ``ids`` [B, n] after ``past``: argmax [B, n], hidden [B, n, d] and the new KV cache
        (``NativeModel.batch``; ``pad`` [B]: each row's left padding)."""
        return self.model.batch(ids, past, pad)

    def teacher_forced(self, ids: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The target's argmax [T] and features [T, d] over one whole text, in one pass."""
        argmax, hidden, _ = self.run(np.array([ids]))
        return argmax[0], hidden[0]

    def greedy(self, prompts: list[list[int]], max_new: int) -> list[tuple[list[int], np.ndarray, np.ndarray]]:
        """The target's greedy answers to ``prompts``, decoded together (left-padded to one length): for each, the
        prompt and answer ids, and the argmax and features at each of those positions (from the decoding passes).

        A batch of one is exactly the drafted loop's greedy text. A padded row is too, bit for bit, where its padding
        is a multiple of 4 tokens (``data.aligned_batches`` groups texts so); other paddings move its features by a
        few percent (benchmarks/FINDINGS.md, "The draft's batched data sees the target a little differently").
        """
        batch, width = len(prompts), max(len(p) for p in prompts)
        pad = np.array([width - len(p) for p in prompts], np.int64)
        ids = np.array([[0] * (width - len(p)) + list(p) for p in prompts], np.int64)
        argmax, hidden, past = self.run(ids, pad=pad)
        texts = [list(p) for p in prompts]
        am, hs = [argmax], [hidden]
        done = np.zeros(batch, bool)
        for step in range(max_new):
            token = am[-1][:, -1]
            for b in range(batch):
                if not done[b]:
                    texts[b].append(int(token[b]))
                    done[b] = int(token[b]) in self.eos
            if done.all() or step == max_new - 1:
                break
            argmax, hidden, past = self.run(token[:, None], past, pad)
            am.append(argmax)
            hs.append(hidden)
        am, hs = np.concatenate(am, 1), np.concatenate(hs, 1)
        out = []
        for b in range(batch):
            # The last token written has no pass of its own (its label would be itself); a finished answer's
            # later rows are the batch's, not its own.
            length = min(len(texts[b]), am.shape[1] - pad[b])
            out.append((texts[b][:length], am[b, pad[b]:pad[b] + length], hs[b, pad[b]:pad[b] + length]))
        return out
