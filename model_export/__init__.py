"""Export a Qwen2-family decoder to the exact, fast ONNX model the lesson runs.

The pipeline (see ``build.py``): load the source with transformers (a GGUF is
dequantised to float32) -> its word tables tied where they are one table
stored twice (``tied.py``) -> one ONNX decoder graph with a KV cache, exported by
optimum -> attention rewritten so a position's prediction does not depend on
what else is in the pass (``attention.py``) -> every weight MatMul quantised
to int8 with one activation scale per row (``quantize.py``) -> per-position
argmax and top-k outputs (``outputs.py``) -> ``manifest.json``.

References: optimum's ONNX exporter; onnxruntime's MatMulInteger and
com.microsoft FusedMatMul operators; Leviathan, Kalman & Matias (2023) for why
the exactness matters (verified drafting must reproduce greedy decoding).
"""

EXPORTER_VERSION = "1"
