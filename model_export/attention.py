"""Attention rewritten so a position's numbers do not depend on how long the pass is.

Two effects break that even in float32, and each is fixed at its root:

* onnxruntime-web's WASM Softmax sums a row in SIMD blocks and adds the tail
  elements separately, so the same scores summed in a row of length 7 and of
  length 30 round differently. We pad every score row with -inf to a multiple
  of 16 before Softmax (exp(-inf) is an exact 0) and slice the padding off.
* native x86 onnxruntime multiplies a one-row matrix (a one-token KV step) with
  a different kernel than a many-row one when alpha is 1. We compute both
  attention products as FusedMatMul(A, B + B, alpha=0.5): doubling is exact, so
  the value is the same, and the kernel no longer depends on the row count.
"""

import numpy as np
import onnx

from .graph import MS_DOMAIN, Rewriter, consumers, producers

SOFTMAX_BLOCK = 16
_BACK_THROUGH = {"Add", "Mul", "Div", "Where", "Cast"}
_FORWARD_THROUGH = {"Cast", "Where", "IsNaN", "Dropout", "Identity"}


def fix_attention(model: onnx.ModelProto) -> int:
    """Rewrite every attention block in place; returns how many were found."""
    rw = Rewriter(model, "exact_attention")
    softmaxes = [node for node in model.graph.node if node.op_type == "Softmax"]
    products = set()
    for softmax in softmaxes:
        products.add(_scores_matmul(softmax, producers(model.graph), rw.initializers).name)
        products.add(_values_matmul(softmax, consumers(model.graph)).name)
    if len(products) != 2 * len(softmaxes):
        raise RuntimeError("could not find the two attention products of every Softmax")

    def replace(node, out) -> bool:
        if node.op_type == "Softmax":
            _padded_softmax(rw, node, out)
            return True
        if node.name in products:
            doubled = rw.node(out, "Add", [node.input[1], node.input[1]])
            rw.node(out, "FusedMatMul", [node.input[0], doubled], domain=MS_DOMAIN, outputs=list(node.output), alpha=0.5)
            return True
        return False

    rw.replace_nodes(replace)
    rw.use_domain(MS_DOMAIN)
    return len(softmaxes)


def _padded_softmax(rw: Rewriter, node, out) -> None:
    scores = node.input[0]
    length = rw.node(out, "Shape", [scores], start=-1)
    remainder = rw.node(out, "Mod", [length, rw.constant([SOFTMAX_BLOCK], np.int64)])
    missing = rw.node(out, "Sub", [rw.constant([SOFTMAX_BLOCK], np.int64), remainder])
    pad = rw.node(out, "Mod", [missing, rw.constant([SOFTMAX_BLOCK], np.int64)])
    # Pads list every axis's start, then every axis's end; only the last axis's end grows.
    pads = rw.node(out, "Concat", [rw.constant([0] * 7, np.int64), pad], axis=0)
    padded = rw.node(out, "Pad", [scores, pads, rw.constant(-np.inf, np.float32)], mode="constant")
    probs = rw.node(out, "Softmax", [padded], axis=-1)
    rw.node(out, "Slice", [probs, rw.constant([0], np.int64), length, rw.constant([-1], np.int64)],
            outputs=list(node.output))


def _scores_matmul(softmax, produced_by: dict, initializers: dict):
    """The Q·Kᵀ MatMul behind a Softmax, through the scale and mask ops."""
    frontier = [softmax.input[0]]
    for _ in range(6):
        nodes = [produced_by[name] for name in frontier if name in produced_by]
        for node in nodes:
            if node.op_type == "MatMul" and not any(name in initializers for name in node.input):
                return node
        frontier = [name for node in nodes if node.op_type in _BACK_THROUGH for name in node.input]
    raise RuntimeError(f"no Q·Kᵀ MatMul found before {softmax.name}")


def _values_matmul(softmax, consumed_by: dict):
    """The P·V MatMul after a Softmax, through casts and NaN guards."""
    frontier = [softmax.output[0]]
    for _ in range(6):
        next_frontier = []
        for name in frontier:
            for node in consumed_by.get(name, []):
                if node.op_type == "MatMul" and node.input[0] == name:
                    return node
                if node.op_type in _FORWARD_THROUGH:
                    next_frontier.extend(node.output)
        frontier = next_frontier
    raise RuntimeError(f"no P·V MatMul found after {softmax.name}")
