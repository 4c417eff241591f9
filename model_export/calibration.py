"""Activation peaks for smoothing, measured by running the model in float64 on a calibration text.

The text (``calibration.txt``) mixes prose, lists, code, SQL, arithmetic, four
languages and a chat turn, and shares nothing with the tests' held-out text.
Peaks are keyed by the ONNX MatMul node each Linear layer becomes: optimum names
``model.layers.0.self_attn.q_proj`` as ``/model/layers.0/self_attn/q_proj/MatMul``.

Why float64, everywhere: a float32 sum comes out of whichever code path the processor gives
(MKL's, chosen once per process; ATen's vector width, AVX2 or AVX-512), and the peaks then differ
by a few ulps between machines, which moves int8 codes and scales: two builds of the same source
gave different files (benchmarks/FINDINGS.md, "It differed again", "The export differs by the
processor that builds it"). transformers' Qwen2 computes its norms, its rotary angles and its
softmax in float32 whatever the model's dtype, so a float64 copy alone still had 70 % of its peaks
moved by ATen's AVX2 path: here those three run in float64 too (``_float64``). A peak then moves
only by float64's rounding, which a float32 peak sees only within about 1e-15 of a rounding
boundary: on the real model ATen's AVX2 path and MKL's most conservative one give the same
``model.onnx`` as AVX-512 (benchmarks/FINDINGS.md, "One export on every processor"). The copy
costs twice the float32 model's memory for the one pass (about 4 GB for 0.5B).
"""

import copy
from pathlib import Path

import numpy as np

CALIBRATION_TEXT = Path(__file__).with_name("calibration.txt")


def activation_peaks(model, tokenizer) -> dict[str, np.ndarray]:
    import torch

    model = _float64(model)
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


def _float64(model):
    """A float64 copy of ``model`` whose norms, rotary angles and attention are computed in float64 as well."""
    import torch

    model = copy.deepcopy(model).to(torch.float64)
    # Eager attention takes its softmax in float32; scaled_dot_product_attention keeps the inputs' float64.
    model.config._attn_implementation = "sdpa"
    for module in model.modules():
        if hasattr(module, "variance_epsilon") and hasattr(module, "weight"):  # an RMSNorm
            module.forward = _rms_norm.__get__(module)
        elif hasattr(module, "inv_freq") and hasattr(module, "attention_scaling"):  # the rotary embedding
            module.forward = _rotary.__get__(module)
    return model


def _rms_norm(self, hidden):
    import torch

    return self.weight * (hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


def _rotary(self, x, position_ids):
    import torch

    # The angles of the float32 frequencies the exported graph holds, multiplied and taken in float64.
    freqs = (self.inv_freq.to(torch.float64)[None, :, None] @ position_ids[:, None, :].to(torch.float64)).transpose(1, 2)
    angles = torch.cat((freqs, freqs), dim=-1)
    return (angles.cos() * self.attention_scaling).to(x.dtype), (angles.sin() * self.attention_scaling).to(x.dtype)
