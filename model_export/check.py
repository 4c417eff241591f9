"""Native checks of an export: position independence, quality against float32, speed.

The lesson's exactness claim needs one property of the model: the numbers at a
position depend only on the tokens up to it, never on what else is in the pass.
``position_independence`` compares, bit for bit, a full pass with prefix passes,
with passes that predict only from a later row, and with KV-cache steps of one
and of several tokens. Every pass goes through the lesson's own native backend
(py/onepass/backends/native.py), fed exactly as the algorithms feed it.
"""

import functools
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
from onepass.backends.native import NativeModel

from .build import REFERENCE


def load(folder: Path, threads: int = 1, reference: bool = False) -> NativeModel:
    """The lesson's own native harness over an export (its float32 reference graph with ``reference``)."""
    return NativeModel(folder, threads, file=REFERENCE if reference else None)


def logits(model: NativeModel, ids: list[int], rows_from: int = 0) -> np.ndarray:
    """The logits of ``ids[rows_from:]`` from one fresh pass over ``ids``."""
    found, _, _ = model.outputs(ids, None, logits=True, first_row=rows_from)
    return found[model.manifest["outputs"]["logits"]]


def prefilled(model: NativeModel, ids: list[int], m: int) -> tuple[np.ndarray, list]:
    """One fresh pass over ids[:m] predicting from its last row: that row's logits and the KV cache, which every
    stepped case of ``m`` starts from (harness.js's ``steppedLogits`` shares it the same way)."""
    found, past, _ = model.outputs(ids[:m], None, logits=True, first_row=m - 1)
    return found[model.manifest["outputs"]["logits"]], past


def stepped_logits(model: NativeModel, ids: list[int], prefill: tuple[np.ndarray, list], step: int) -> np.ndarray:
    """The logits from row m - 1 on: ``prefill`` (``prefilled`` over ids[:m]) then KV-cache steps of ``step``."""
    name = model.manifest["outputs"]["logits"]
    rows, past = [prefill[0]], prefill[1]
    for begin in range(past[0].shape[2], len(ids), step):  # the cache is [1, heads, m, head_dim]
        found, past, _ = model.outputs(ids[begin:begin + step], past, logits=True)
        rows.append(found[name])
    return np.concatenate(rows)


def compare(reference: np.ndarray, other: np.ndarray, first: int = 0) -> dict:
    """How ``other`` (rows ``first`` on) compares with ``reference``'s rows, bit for bit."""
    rows = len(other)
    reference = reference[first:first + rows]
    return {
        "positions": rows,
        "bit_identical": bool(np.array_equal(reference.view(np.uint32), other.view(np.uint32))),
        "argmax_flips": int((reference.argmax(-1) != other.argmax(-1)).sum()),
        "max_abs_diff": float(np.abs(reference - other).max()),
    }


KV_PREFILL = 7  # tokens before the KV-cache steps begin
KV_STEPS = {"kv_step1": 1, "kv_chunk6": 6}  # one token at a time, and verification-sized chunks


def cases(n: int) -> list[dict]:
    """The position-independence checks over ``n`` tokens: the one list both harnesses run.

    Natively ``position_independence`` runs it; under WASM (Node and the browser)
    runtime/harness.js is handed the same list. A case is a
    fresh pass over the first ``length`` tokens that predicts from row
    ``rows_from``, or a prefill of ``prefill`` tokens then KV-cache steps of
    ``step``; either must give the full pass's rows bit for bit. The stepped cases of one
    prefill share it (from its last row on; the second after cutting the cache back to it,
    as a rejected draft does), so a long text's 500 tokens are read once, not per case.
    """
    if n < 2:
        raise ValueError("the position-independence check needs at least 2 tokens")
    fresh = [{"name": "repeat_full", "length": n, "rows_from": 0}]
    fresh += [{"name": f"prefix_{k}", "length": k, "rows_from": 0}
              for k in sorted({1, 2, 7, 16, 17, n // 2, n - 1}) if 0 < k < n]
    fresh += [{"name": f"rows_from_{k}", "length": n, "rows_from": k} for k in sorted({1, n // 2, n - 1}) if 0 < k < n]
    stepped = [{"name": name, "prefill": min(KV_PREFILL, n - 1), "step": step} for name, step in KV_STEPS.items()]
    return fresh + stepped


def long_cases(n: int, prefill: int) -> list[dict]:
    """The checks of a long text (past 512 positions): the cases of the whole text and of its first rows, and the
    KV-cache steps after ``prefill`` tokens, so they run where the text is long; not the cases of its middle, nor
    hundreds of single steps to get there (the short texts' ``cases`` step from the seventh token)."""
    middle = {f"prefix_{n // 2}", "rows_from_1", f"rows_from_{n // 2}"}
    return [{**case, "prefill": prefill} if "step" in case else case for case in cases(n) if case["name"] not in middle]


@functools.cache  # the processor does not change within a process
def native_int8_products_exact() -> bool:
    """Whether this processor's native onnxruntime computes our int8 products exactly (the tab's WASM kernel does).

    The graph multiplies uint8 activations (zero point 128) by int8 weights (``quantize.py``). On an x86 processor
    without VNNI (AVX2 only, or AVX-512 without VNNI) onnxruntime's kernel adds pairs of those products in 16 bits
    with saturation (VPMADDUBSW: 255 x 127 x 2 overflows), so its MatMulInteger is not the integer product
    (benchmarks/FINDINGS.md, "Native int8 on a processor without VNNI"). Position independence and drafted == greedy
    still hold there (the saturation is the same for a row wherever it sits), but the native figures of quality and
    acceptance are that processor's, not the page's. A one-node graph with operands that overflow tells.
    """
    rng = np.random.default_rng(0)
    weights = np.where(rng.random((64, 16)) < 0.5, -127, 127).astype(np.int8)
    activations = np.where(weights[:, :1].T > 0, 255, 1).astype(np.uint8).repeat(4, 0)
    exact = (activations.astype(np.int64) - 128) @ weights.astype(np.int64)
    return bool(np.array_equal(native_matmul_integer(activations, weights), exact))


def native_matmul_integer(activations: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """uint8 [M, K] (zero point 128) times int8 [K, N] by onnxruntime's native MatMulInteger, as our graphs call it."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "w", "z"], ["y"])], "probe",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, list(activations.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [activations.shape[0], weights.shape[1]])],
        [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(np.array(128, np.uint8), "z")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = min(model.ir_version, 9)
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"a": activations})[0]


def run_graph(graph: bytes | Path, feeds: dict, outputs: list[str], exact_int8: bool = False,
              reference: bool | None = None) -> list[np.ndarray]:
    """``outputs`` of one run of an ONNX graph (its bytes or file) on ``feeds``, by onnxruntime natively; with
    ``exact_int8``, where this processor's onnxruntime does not multiply int8 exactly (``native_int8_products_exact``),
    by onnx's reference evaluator, which computes the graph's integer products exactly, as the tab's WASM kernel does.
    ``reference`` True or False chooses the evaluator or onnxruntime whatever the processor (to test both on one).
    """
    import onnx
    import onnx.utils

    if reference is None:
        reference = exact_int8 and not native_int8_products_exact()
    if not reference:
        import onnxruntime as ort

        session = ort.InferenceSession(graph if isinstance(graph, bytes) else str(graph), providers=["CPUExecutionProvider"])
        return session.run(outputs, feeds)
    from onnx.reference import ReferenceEvaluator

    model = onnx.load_from_string(graph) if isinstance(graph, bytes) else onnx.load(str(graph))
    # The evaluator runs every node it is given: only those the outputs need (a top-k over the vocabulary costs more
    # than the whole pass here).
    model = onnx.utils.Extractor(model).extract_model(list(feeds), outputs)
    return ReferenceEvaluator(model, new_ops=[_FusedMatMul()]).run(outputs, feeds)


def _FusedMatMul():  # noqa: N802 (the operator's name)
    """onnxruntime's com.microsoft FusedMatMul (``attention.py`` writes it), for onnx's reference evaluator:
    alpha times the product of A and B, either transposed."""
    from onnx.reference.op_run import OpRun

    class FusedMatMul(OpRun):
        op_domain = "com.microsoft"

        def _run(self, a, b, alpha=None, transA=None, transB=None, transBatchA=None, transBatchB=None):  # noqa: N803
            if transBatchA or transBatchB:
                raise NotImplementedError("FusedMatMul with transBatchA or transBatchB")
            a = np.swapaxes(a, -1, -2) if transA else a
            b = np.swapaxes(b, -1, -2) if transB else b
            return (np.matmul(a, b) * np.float32(1.0 if alpha is None else alpha)).astype(a.dtype),

    return FusedMatMul


def position_independence(model: NativeModel, ids: list[int], checks: list[dict] | None = None) -> dict:
    """Every case of ``cases`` (or ``checks``) natively, each compared with one full pass."""
    full = logits(model, ids)
    found = {}
    prefills = {}  # the stepped cases of one prefill length share it, as in harness.js
    for case in checks or cases(len(ids)):
        if "step" in case:
            m = case["prefill"]
            if m not in prefills:
                prefills[m] = prefilled(model, ids, m)
            found[case["name"]] = compare(full, stepped_logits(model, ids, prefills[m], case["step"]), m - 1)
        else:
            got = logits(model, ids[:case["length"]], case["rows_from"])
            found[case["name"]] = compare(full, got, case["rows_from"])
    return {"checks": found, "all_identical": all(c["bit_identical"] for c in found.values())}


def hidden_rows(model: NativeModel, ids: list[int], past=None) -> tuple[np.ndarray, list]:
    """The features (``hidden``) of every position of one pass over ``ids`` after ``past``, and the new past."""
    found, present, _ = model.outputs(ids, past, logits=False, first_row=len(ids) - 1, hidden=True)
    return found[model.manifest["outputs"]["hidden"]], present


def feature_independence(model: NativeModel, ids: list[int]) -> dict:
    """The features a draft model reads obey the same rule, bit for bit: a prefix pass, and KV-cache steps of
    1 and 6, give the full pass's rows (whatever row the predictions start from)."""
    full, _ = hidden_rows(model, ids)
    checks = {f"hidden_prefix_{k}": compare(full, hidden_rows(model, ids[:k])[0])
              for k in sorted({1, 7, len(ids) // 2}) if 0 < k < len(ids)}
    for name, step in KV_STEPS.items():
        rows, past = hidden_rows(model, ids[:KV_PREFILL])
        rows = [rows]
        for begin in range(KV_PREFILL, len(ids), step):
            found, past = hidden_rows(model, ids[begin:begin + step], past)
            rows.append(found)
        checks[f"hidden_{name}"] = compare(full, np.concatenate(rows))
    return {"checks": checks, "all_identical": all(c["bit_identical"] for c in checks.values())}


def quality(model: NativeModel, reference: NativeModel, ids: list[int]) -> dict:
    """Teacher-forced agreement with the float32 export: same text, compare each position's prediction."""
    return agreement(logits(model, ids), logits(reference, ids))


def agreement(ours: np.ndarray, theirs: np.ndarray, rows: int = 64) -> dict:
    """How the logits ``ours`` agree with the reference's ``theirs``, position by position: top-1 and KL. In float64,
    ``rows`` positions at a time: whole, 1,758 positions' float64 copies of the vocabulary took 34 s, mostly in
    making and filling arrays of 2 GB."""
    kl = 0.0
    for begin in range(0, len(ours), rows):
        log_p, log_q = _log_softmax(theirs[begin:begin + rows]), _log_softmax(ours[begin:begin + rows])
        kl += float((np.exp(log_p) * (log_p - log_q)).sum())
    return {
        "positions": len(ours),
        "top1_agreement": float((ours.argmax(-1) == theirs.argmax(-1)).mean()),
        "kl_fp32_to_int8": kl / len(ours),
    }


def speed(model: NativeModel, ids: list[int], repeats: int = 10) -> dict:
    """Median milliseconds of the passes harness.js times: decode-1 and verify-6 after a 32-token past, and
    prefill-30 predicting from its last row."""
    _, past, _ = model.outputs(ids[:32], None, logits=False)

    def median_ms(run) -> float:
        run()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            run()
            times.append((time.perf_counter() - start) * 1000)
        return round(statistics.median(times), 2)

    return {
        "decode_1_ms": median_ms(lambda: model.outputs(ids[32:33], past, logits=False)),
        "verify_6_ms": median_ms(lambda: model.outputs(ids[32:38], past, logits=False)),
        "prefill_30_ms": median_ms(lambda: model.outputs(ids[:30], None, logits=False, first_row=29)),
    }


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits.astype(np.float64) - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def wasm_runs(folder: Path, runs: list[tuple[list[int], list[dict] | None]], threads: int = 1,
              bench: bool = False) -> dict:
    """The same checks under onnxruntime-web's WASM build, run by Node (wasm_check.mjs), on several texts in one
    session: each of ``runs`` is a text's ids and its checks (``None``: ``cases``). ``runs`` in the answer holds a
    result per text, in order."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as check_file:
        json.dump({"runs": [{"ids": ids, "cases": checks or cases(len(ids))} for ids, checks in runs]}, check_file)
        check_file.flush()
        command = ["node", str(Path(__file__).with_name("wasm_check.mjs")), "--model", str(folder),
                   "--check", check_file.name, "--threads", str(threads), *(["--bench"] if bench else [])]
        result = subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    if result.returncode not in (0, 1):
        raise RuntimeError(f"wasm_check failed:\n{result.stdout}\n{result.stderr[-3000:]}")
    return json.loads(result.stdout)


def wasm(folder: Path, ids: list[int], threads: int = 1, bench: bool = False, checks: list[dict] | None = None) -> dict:
    """The same checks (``cases``, or ``checks``) under onnxruntime-web's WASM build, on one text (``wasm_runs``)."""
    report = wasm_runs(folder, [(ids, checks)], threads, bench)
    return {**report, **report["runs"][0]}
