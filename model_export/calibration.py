"""Activation peaks for smoothing, measured by running the float32 model on a calibration text.

The text (``calibration.txt``) mixes prose, lists, code, SQL, arithmetic, four
languages and a chat turn, and shares nothing with the tests' held-out text.
Peaks are keyed by the ONNX MatMul node each Linear layer becomes: optimum names
``model.layers.0.self_attn.q_proj`` as ``/model/layers.0/self_attn/q_proj/MatMul``.
"""

from pathlib import Path

import numpy as np

CALIBRATION_TEXT = Path(__file__).with_name("calibration.txt")


def activation_peaks(model, tokenizer) -> dict[str, np.ndarray]:
    import torch

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
    return {f"/{name.replace('.', '/')}/MatMul".replace("layers/", "layers."): peak.numpy() for name, peak in peaks.items()}
