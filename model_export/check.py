"""Native checks of an export: position independence, quality against float32, speed.

The lesson's exactness claim needs one property of the model: the numbers at a
position depend only on the tokens up to it, never on what else is in the pass.
``position_independence`` compares, bit for bit, a full pass with prefix passes
and with KV-cache steps of one and of several tokens.
"""

import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort


class Decoder:
    """One onnxruntime session over an export, fed the way the lesson feeds it."""

    def __init__(self, model_path: Path, manifest: dict, threads: int = 1):
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self.kv = manifest["kv"]
        self.output_names = [o.name for o in self.session.get_outputs()]

    def empty_past(self) -> dict:
        shape = (1, self.kv["num_kv_heads"], 0, self.kv["head_dim"])
        past = {}
        for i in range(self.kv["num_layers"]):
            past[self.kv["input_key"].format(i=i)] = np.zeros(shape, np.float32)
            past[self.kv["input_value"].format(i=i)] = np.zeros(shape, np.float32)
        return past

    def run(self, ids: list[int], past: dict | None = None, logits: bool = True) -> tuple[dict, dict]:
        """One pass over ``ids`` after ``past``; returns (outputs by name, the next pass's past).

        Without ``logits`` it fetches what the pages fetch: argmax, top-k and the KV cache.
        """
        past = past if past is not None else self.empty_past()
        start = next(iter(past.values())).shape[2]
        feeds = {
            "input_ids": np.array([ids], np.int64),
            "attention_mask": np.ones((1, start + len(ids)), np.int64),
            "position_ids": np.arange(start, start + len(ids), dtype=np.int64)[None],
            **past,
        }
        names = self.output_names if logits else [name for name in self.output_names if name != "logits"]
        values = dict(zip(names, self.session.run(names, feeds)))
        present = {}
        for i in range(self.kv["num_layers"]):
            present[self.kv["input_key"].format(i=i)] = values[self.kv["output_key"].format(i=i)]
            present[self.kv["input_value"].format(i=i)] = values[self.kv["output_value"].format(i=i)]
        return values, present

    def logits(self, ids: list[int]) -> np.ndarray:
        return self.run(ids)[0]["logits"][0]

    def stepped_logits(self, ids: list[int], prefill: int, step: int) -> np.ndarray:
        """Logits for every position, computed as a prefill then KV-cache steps of ``step`` tokens."""
        values, past = self.run(ids[:prefill])
        rows = [values["logits"][0]]
        for begin in range(prefill, len(ids), step):
            values, past = self.run(ids[begin:begin + step], past)
            rows.append(values["logits"][0])
        return np.concatenate(rows)


def compare(reference: np.ndarray, other: np.ndarray) -> dict:
    rows = len(other)
    reference = reference[:rows]
    return {
        "positions": rows,
        "bit_identical": bool(np.array_equal(reference.view(np.uint32), other.view(np.uint32))),
        "argmax_flips": int((reference.argmax(-1) != other.argmax(-1)).sum()),
        "max_abs_diff": float(np.abs(reference - other).max()),
    }


def position_independence(decoder: Decoder, ids: list[int]) -> dict:
    full = decoder.logits(ids)
    checks = {"repeat_full": compare(full, decoder.logits(ids))}
    for length in sorted({1, 2, 7, 16, 17, len(ids) // 2, len(ids) - 1}):
        if 0 < length < len(ids):
            checks[f"prefix_{length}"] = compare(full, decoder.logits(ids[:length]))
    prefill = min(7, len(ids) - 1)
    checks["kv_step1"] = compare(full, decoder.stepped_logits(ids, prefill, 1))
    checks["kv_step6"] = compare(full, decoder.stepped_logits(ids, prefill, 6))
    return {"checks": checks, "all_identical": all(c["bit_identical"] for c in checks.values())}


def quality(decoder: Decoder, reference: Decoder, ids: list[int]) -> dict:
    """Teacher-forced agreement with the float32 export: same text, compare each position's prediction."""
    ours, theirs = decoder.logits(ids), reference.logits(ids)
    log_p, log_q = _log_softmax(theirs), _log_softmax(ours)
    return {
        "positions": len(ids),
        "top1_agreement": float((ours.argmax(-1) == theirs.argmax(-1)).mean()),
        "kl_fp32_to_int8": float((np.exp(log_p) * (log_p - log_q)).sum(-1).mean()),
    }


def speed(decoder: Decoder, ids: list[int], repeats: int = 10) -> dict:
    """Median milliseconds for decode-1 and verify-6 after a 32-token past, and prefill-30."""
    _, past = decoder.run(ids[:32])

    def median_ms(run) -> float:
        run()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) * 1000)
        return round(statistics.median(times), 2)

    return {
        "decode_1_ms": median_ms(lambda: decoder.run(ids[32:33], past, logits=False)),
        "verify_6_ms": median_ms(lambda: decoder.run(ids[32:38], past, logits=False)),
        "prefill_30_ms": median_ms(lambda: decoder.run(ids[:30], logits=False)),
    }


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def load(folder: Path, threads: int = 1, reference: bool = False) -> Decoder:
    manifest = json.loads((Path(folder) / "manifest.json").read_text())
    path = Path(folder) / ("reference/model_fp32.onnx" if reference else "model.onnx")
    return Decoder(path, manifest, threads)


def wasm(folder: Path, ids: list[int], threads: int = 1, bench: bool = False) -> dict:
    """The same checks under onnxruntime-web's WASM build, run by Node (see wasm_check.mjs)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as ids_file:
        json.dump(ids, ids_file)
        ids_file.flush()
        command = ["node", str(Path(__file__).with_name("wasm_check.mjs")), "--model", str(folder),
                   "--ids", ids_file.name, "--threads", str(threads), *(["--bench"] if bench else [])]
        result = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"wasm_check failed:\n{result.stdout}\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)
