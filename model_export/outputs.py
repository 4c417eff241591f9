"""Per-position outputs small enough to cross the browser's Python bridge, for the rows a caller wants.

Logits are 151,936 floats per position; the lesson needs only the greedy token
and a few alternatives. The graph therefore also returns, at every position,
the argmax id and the top-k ids with their softmax probabilities. A caller
fetches just these; the logits stay available for those that ask.

Most passes need predictions at a few rows only: generation the last, a
verification the draft's. The output layer (896 x 151,936, over a quarter of a
pass's multiply-adds) and everything after it therefore run only from the row
``first_row`` (an input, 0 for all): the hidden states are sliced just before
it. A row's prediction is computed from that row alone, so slicing changes no
number; the position-independence checks prove it bit for bit.

The hidden states themselves (the final norm's output, the output layer's input
before any smoothing) are an output too, ``hidden``, at every fed position: a
draft model (``draft/``) reads the target's own features, EAGLE-style. Nothing
but a caller that fetches them pays for them.
"""

import numpy as np
import onnx
from onnx import TensorProto, helper

from .graph import Rewriter

TOP_K = 10
OUTPUTS = {"logits": "logits", "argmax": "argmax", "topk_ids": "topk_ids", "topk_probs": "topk_probs",
           "hidden": "hidden"}
FIRST_ROW = "first_row"
ROWS = "rows"  # the outputs' length: the pass's tokens from first_row on
_TO_THE_END = np.iinfo(np.int64).max


def slice_prediction_rows(model: onnx.ModelProto) -> None:
    """Feed the output layer only the rows from the input ``first_row`` on (a 1-element int64 tensor), and
    return every row's hidden state as ``hidden``."""
    rw = Rewriter(model, "prediction_rows")
    head = next(node for node in model.graph.node if OUTPUTS["logits"] in node.output)
    hidden = head.input[0]
    size = _hidden_size(model, head)
    out: list = [helper.make_node("Identity", [hidden], [OUTPUTS["hidden"]], name="/prediction_rows/hidden")]
    rows = rw.node(out, "Slice", [hidden, FIRST_ROW, rw.constant([_TO_THE_END], np.int64), rw.constant([1], np.int64)])
    head.input[0] = rows
    # The Slice goes right after the node that makes the hidden states, keeping the nodes in topological order.
    position = next(i for i, node in enumerate(model.graph.node) if hidden in node.output) + 1
    for i, node in enumerate(out):
        model.graph.node.insert(position + i, node)
    model.graph.input.append(helper.make_tensor_value_info(FIRST_ROW, TensorProto.INT64, [1]))
    for output in model.graph.output:
        if output.name == OUTPUTS["logits"]:
            output.type.tensor_type.shape.dim[1].dim_param = ROWS
    model.graph.output.append(
        helper.make_tensor_value_info(OUTPUTS["hidden"], TensorProto.FLOAT, ["batch_size", "sequence_length", size]))


def _hidden_size(model: onnx.ModelProto, head) -> int:
    """The output layer's input width: its weight's first dimension."""
    weight = next(t for t in model.graph.initializer if t.name == head.input[1])
    return int(weight.dims[0])


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
        helper.make_tensor_value_info(OUTPUTS["argmax"], TensorProto.INT64, ["batch_size", ROWS]),
        helper.make_tensor_value_info(OUTPUTS["topk_ids"], TensorProto.INT64, ["batch_size", ROWS, top_k]),
        helper.make_tensor_value_info(OUTPUTS["topk_probs"], TensorProto.FLOAT, ["batch_size", ROWS, top_k]),
    ])
