"""Activation peaks for smoothing, measured by running the model in float64 on a calibration text.

The text (``calibration.txt``) mixes prose, lists, code, SQL, arithmetic, four
languages and a chat turn, and shares nothing with the tests' held-out text.
Peaks are keyed by the ONNX MatMul node each Linear layer becomes: optimum names
``model.layers.0.self_attn.q_proj`` as ``/model/layers.0/self_attn/q_proj/MatMul``.

Why float64: a float32 forward's sums come out of whichever code path MKL picks once per
process (by processor and load), and the peaks then differ by a few ulps between processes,
which moves int8 codes and scales: two builds of the same source gave different files
(benchmarks/FINDINGS.md, "It differed again"). Summed in float64 and rounded to float32,
a peak can only flip within 1e-16 of a rounding boundary, so every path gives the same bytes.
The copy costs twice the float32 model's memory for the one pass (about 4 GB for 0.5B).
"""

from pathlib import Path

import numpy as np

CALIBRATION_TEXT = Path(__file__).with_name("calibration.txt")


def activation_peaks(model, tokenizer) -> dict[str, np.ndarray]:
    import copy

    import torch

    model = copy.deepcopy(model).to(torch.float64)
    peaks: dict[str, torch.Tensor] = {}

    def record(name):
        def hook(module, inputs, output):
            peak = inputs[0].detach().abs().reshape(-1, inputs[0].shape[-1]).amax(dim=0)
            peaks[name] = torch.maximum(peaks[name], peak) if name in peaks else peak
        return hook

    handles = [module.register_forward_hook(record(name)) for name, module in model.named_modules()
               if isinstance(module, torch.nn.Linear)]
    try:
        ids = tokenizer(CALIBRATION_TEXT.read_text(), return_tensors="pt").input_ids
        with torch.no_grad():
            model(ids)
    finally:
        for handle in handles:
            handle.remove()
    return {f"/{name.replace('.', '/')}/MatMul".replace("layers/", "layers."): peak.to(torch.float32).numpy()
            for name, peak in peaks.items()}
