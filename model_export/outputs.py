"""Per-position outputs small enough to cross the browser's Python bridge.

Logits are 151,936 floats per position; the lesson needs only the greedy token
and a few alternatives. The graph therefore also returns, at every position,
the argmax id and the top-k ids with their softmax probabilities. A caller
fetches just these; the logits stay available for those that ask.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper

from .graph import Rewriter

TOP_K = 10
OUTPUTS = {"logits": "logits", "argmax": "argmax", "topk_ids": "topk_ids", "topk_probs": "topk_probs"}


def add_prediction_outputs(model: onnx.ModelProto, top_k: int = TOP_K) -> None:
    rw = Rewriter(model, "predictions")
    out: list = []
    logits = OUTPUTS["logits"]
    rw.node(out, "ArgMax", [logits], outputs=[OUTPUTS["argmax"]], axis=-1, keepdims=0)
    peak = rw.node(out, "ReduceMax", [logits, rw.constant([-1], np.int64)], keepdims=1)
    total = rw.node(out, "ReduceSum", [rw.node(out, "Exp", [rw.node(out, "Sub", [logits, peak])]),
                                       rw.constant([-1], np.int64)], keepdims=1)
    log_norm = rw.node(out, "Add", [peak, rw.node(out, "Log", [total])])
    values, _ = rw.node(out, "TopK", [logits, rw.constant([top_k], np.int64)], outputs=["/predictions/topk_values", OUTPUTS["topk_ids"]],
                        axis=-1, largest=1, sorted=1)
    rw.node(out, "Exp", [rw.node(out, "Sub", [values, log_norm])], outputs=[OUTPUTS["topk_probs"]])
    model.graph.node.extend(out)
    model.graph.output.extend([
        helper.make_tensor_value_info(OUTPUTS["argmax"], TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info(OUTPUTS["topk_ids"], TensorProto.INT64, ["batch_size", "sequence_length", top_k]),
        helper.make_tensor_value_info(OUTPUTS["topk_probs"], TensorProto.FLOAT, ["batch_size", "sequence_length", top_k]),
    ])
