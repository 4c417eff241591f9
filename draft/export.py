"""The draft as the file that ships: ``draft.onnx``, and a runner over it (``OnnxDraft``).

The graph's interface (fixed; the native and browser backends are written against it):

    inputs   features  float32 [1, n, d]   the target's features at positions i .. i+n-1 (or the draft's own)
             tokens    int64   [1, n]      the tokens at positions i+1 .. i+n; 1 <= n <= window
    outputs  feature   float32 [1, n, d]   predicted features at i+1 .. i+n
             argmax    int64   [1, n]      the full-vocabulary id of the draft's best next token after each row
             probs     float32 [1, n, S]   the draft's softmax over its readout subset
             vocab     int64   [S]         the subset's full-vocabulary ids, in the order of ``probs``
             confidence float32 [1, n]     the largest of each row's ``probs``: how sure the draft is of ``argmax``,
                                           read where a proposal is decided (``onepass.policy``) without
                                           sorting the readout outside the graph

Attention is causal within the n rows (a window's worth: the caller feeds at most the last ``window`` rows).
Weights are int8 with one activation scale per row (``model_export.quantize``), so a row's numbers depend on
that row alone and the WASM MatMulInteger kernels run them; the readout's table is stored once, for the
embedding lookup and the output layer alike. The target's features have a few channels 40 times larger than
the rest (peaks of 180 against a mean of 4 on the default model), which would leave the other channels a bit or
two of a row's eight: every quantised input is smoothed first, as the target's are (SmoothQuant), with peaks
measured on rows of the training data (``calibration``).
"""

import io
import json
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
from torch import nn

from model_export.quantize import quantize_int8_per_row

from .heads import Eagle

OPSET = 18
INPUTS = ("features", "tokens")
OUTPUTS = ("feature", "argmax", "probs", "vocab", "confidence")


class Interface(nn.Module):
    """The shipped graph's inputs and outputs around an ``Eagle``."""

    def __init__(self, model: Eagle):
        super().__init__()
        self.model = model

    def forward(self, features: torch.Tensor, tokens: torch.Tensor):
        feature = self.model(features, tokens)
        logits = self.model.readout(feature)
        probs = logits.softmax(-1)
        return (feature, self.model.readout.ids[logits.argmax(-1)], probs, self.model.readout.ids + 0,
                probs.amax(-1))


def activation_peaks(graph: onnx.ModelProto, calibration: list[tuple[np.ndarray, np.ndarray]]) -> dict:
    """Per channel, the largest |input| of every weight MatMul of the float graph over ``calibration`` feeds
    ((features [1, n, d], tokens [1, n]) each), keyed by the MatMul node's name."""
    weights = {i.name for i in graph.graph.initializer if len(i.dims) == 2}
    matmuls = [n for n in graph.graph.node if n.op_type == "MatMul" and n.input[1] in weights]
    probe = onnx.ModelProto()
    probe.CopyFrom(graph)
    inputs = sorted({n.input[0] for n in matmuls})
    probe.graph.output.extend(onnx.helper.make_empty_tensor_value_info(name) for name in inputs)
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    peaks: dict[str, np.ndarray] = {}
    for features, tokens in calibration:
        values = session.run(inputs, {"features": features.astype(np.float32), "tokens": tokens.astype(np.int64)})
        for name, value in zip(inputs, values):
            peak = np.abs(value.reshape(-1, value.shape[-1])).max(0)
            peaks[name] = np.maximum(peaks[name], peak) if name in peaks else peak
    return {n.name: peaks[n.input[0]] for n in matmuls}


def float_graph(model: Eagle) -> onnx.ModelProto:
    """The draft's graph in float32, its outputs named as the interface says."""
    d = model.readout.table.shape[1]
    n = min(2, model.window)
    example = (torch.zeros(1, n, d), torch.zeros(1, n, dtype=torch.long))
    buffer = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(Interface(model).eval(), example, buffer, dynamo=False, opset_version=OPSET,
                          input_names=list(INPUTS), output_names=list(OUTPUTS), do_constant_folding=True,
                          dynamic_axes={"features": {1: "n"}, "tokens": {1: "n"}, "feature": {1: "n"},
                                        "argmax": {1: "n"}, "probs": {1: "n"}, "confidence": {1: "n"}})
    graph = onnx.load_from_string(buffer.getvalue())
    for output, name in zip(graph.graph.output, OUTPUTS):
        # A constant output (the subset's ids) is folded into an initializer, which takes its own name.
        if output.name != name:
            graph.graph.node.append(onnx.helper.make_node("Identity", [output.name], [name]))
            output.name = name
    return graph


def to_onnx(model: Eagle, int8: bool = True, calibration=None, peaks: dict | None = None) -> bytes:
    """The draft's graph, serialised; the same weights (and calibration feeds, or their ``activation_peaks``) give
    the same bytes."""
    graph = float_graph(model)
    if int8:
        if peaks is None:
            peaks = activation_peaks(graph, calibration) if calibration else {}
        matmuls = {n.name for n in graph.graph.node if n.op_type == "MatMul"}
        if not set(peaks) <= matmuls:
            raise ValueError("the activation peaks name MatMuls this graph does not have (another torch export?)")
        quantize_int8_per_row(graph, peaks)
    graph.producer_name, graph.producer_version = "onepass-draft", "1"
    return graph.SerializeToString()


class OnnxDraft:
    """A draft folder's ``draft.onnx`` in onnxruntime: ``(features [n, d], tokens [n]) -> (feature, argmax)``."""

    def __init__(self, folder: Path | str, threads: int = 2):
        folder = Path(folder)
        self.info = json.loads((folder / "draft.json").read_text())
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(folder / "draft.onnx"), options, providers=["CPUExecutionProvider"])
        self.window = self.info["window"]

    def run(self, features: np.ndarray, tokens: np.ndarray) -> dict:
        values = self.session.run(list(OUTPUTS), {"features": features[None].astype(np.float32),
                                                  "tokens": tokens[None].astype(np.int64)})
        return dict(zip(OUTPUTS, values))

    def __call__(self, features: np.ndarray, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = self.run(features, tokens)
        return out["feature"][0], out["argmax"][0]
