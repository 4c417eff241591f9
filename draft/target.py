"""The shipped int8 target, run natively with onnxruntime: its features and its own argmax at every position.

The draft learns from exactly what the site runs: ``model.ort`` of an export folder, fed as
``py/onepass/backends/native.py`` feeds it (input ids, attention mask, position ids, ``first_row`` 0, the KV
cache laid out as the manifest says). Besides the argmax it reads the graph's ``hidden`` output (the
manifest's ``outputs.hidden``): the final norm's output at every fed position, the input of the output layer.
A target without that output cannot teach a draft: ``DraftUnavailable``.

Batches of several sequences run in one pass where they have the same length; nothing is padded, so every
row is computed exactly as a batch of one would compute it (position independence, checked by the exporter,
also holds across the batch axis: a row reads only its own sequence).
"""

import json
from pathlib import Path

import numpy as np
import onnxruntime as ort


class DraftUnavailable(RuntimeError):
    """No draft can be built for this target (the site says "no draft for this model")."""


def identity(manifest: dict) -> str:
    """The target's identity as the site states it (``hooks/model.py``): its files' sha256, in order."""
    return manifest.get("identity") or ":".join(f["sha256"] for f in manifest["files"])


class Target:
    def __init__(self, folder: Path | str, threads: int = 2):
        self.folder = Path(folder)
        path = self.folder / "manifest.json"
        if not path.is_file():
            raise DraftUnavailable(f"no manifest.json in {self.folder}: not a model export")
        self.manifest = json.loads(path.read_text())
        self.hidden_name = self.manifest["outputs"].get("hidden")
        if not self.hidden_name:
            raise DraftUnavailable("the model's export has no 'hidden' output, so no draft can learn from it")
        model = self.manifest["model"]
        if model.get("word_tables", {}).get("tables", 2 if not model.get("tied_embeddings") else 1) != 1:
            raise DraftUnavailable("the draft reads and writes through the model's one word table; this model has two")
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(self.folder / self.manifest["graph"]), options,
                                            providers=["CPUExecutionProvider"])
        kv = self.manifest["kv"]
        layers = range(kv["num_layers"])
        self.past_names = [kv[n].format(i=i) for i in layers for n in ("input_key", "input_value")]
        self.present_names = [kv[n].format(i=i) for i in layers for n in ("output_key", "output_value")]
        self.kv = kv
        self.hidden_size = model["hidden_size"]
        self.eos = set(self.manifest["eos_ids"])

    def empty(self, batch: int) -> list[np.ndarray]:
        return [np.zeros((batch, self.kv["num_kv_heads"], 0, self.kv["head_dim"]), np.float32)] * len(self.past_names)

    def run(self, ids: np.ndarray, past: list[np.ndarray] | None = None, pad: np.ndarray | None = None):
        """One pass over ``ids`` [B, n] after ``past``: argmax [B, n], hidden [B, n, d] and the new KV cache.

        ``pad`` [B]: how many of each row's first positions (of the whole text so far) are left padding, which
        the attention mask hides and the position ids skip.
        """
        batch, n = ids.shape
        past = past if past is not None else self.empty(batch)
        start = past[0].shape[2]
        pad = np.zeros(batch, np.int64) if pad is None else pad
        everything = np.arange(start + n)
        mask = (everything[None, :] >= pad[:, None]).astype(np.int64)
        positions = np.maximum(everything[None, start:] - pad[:, None], 0)
        inputs, outputs = self.manifest["inputs"], self.manifest["outputs"]
        feeds = {inputs["input_ids"]: ids.astype(np.int64), inputs["attention_mask"]: mask,
                 inputs["position_ids"]: positions.astype(np.int64), **dict(zip(self.past_names, past))}
        if inputs.get("first_row"):
            feeds[inputs["first_row"]] = np.array([0], np.int64)
        values = self.session.run([outputs["argmax"], self.hidden_name, *self.present_names], feeds)
        return values[0], values[1], values[2:]

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
