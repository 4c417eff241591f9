"""The draft model: a small network trained by this repository from the shipped target model itself (frozen).

**The interface is ready** (branch ``draft-train``): ``python -m draft --target EXPORT_DIR [--seed 0]`` (with
``PYTHONPATH=py``) builds or reuses ``<cache>/drafts/<model>-<key>/`` and prints it; ``build.build(export)`` does
the same from Python and raises ``target.DraftUnavailable`` for a model that cannot have one (its export has no
``hidden`` output, or two word tables). The folder holds:

- ``draft.onnx`` (opset 18, int8 MatMulInteger with per-row activation scales, ops onnxruntime-web runs):
  inputs ``features`` float32 [1, n, d] (the target's features at positions i .. i+n-1, or the draft's own) and
  ``tokens`` int64 [1, n] (the tokens at i+1 .. i+n), 1 <= n <= window, attention causal within the n rows;
  outputs ``feature`` float32 [1, n, d] (predicted features at i+1 .. i+n), ``argmax`` int64 [1, n] (the
  full-vocabulary id of the best next token after each row), ``probs`` float32 [1, n, S] (softmax over the
  readout subset) and ``vocab`` int64 [S] (the subset's ids, in the order of ``probs``);
- ``draft.json``: format, design, window, hidden_size, readout_size, parameters, target {identity, name},
  files [{name, size, sha256}], training {seed, tokens, epochs, sources with licences, seconds},
  acceptance {held-out α per position and tokens per pass per γ}.

A draft round (stateless): rows r = p-W+1 .. p carry (the target's feature at r-1, token r); the last row's
``argmax`` is the guess for p+1; append (its ``feature``, that guess) as a new row, drop the oldest beyond W, run
again for p+2, and so on.

Stages, one module each: ``instructions`` (the chat prompts we wrote), ``target`` (the int8 export natively:
features and argmax), ``data`` (the target's own answers and its choices over text on this machine:
self-distillation), ``heads`` (the designs), ``train`` (fitting one), ``export`` (the shipped graph),
``simulate`` (acceptance per draft position on held-out prompts), ``build`` (the cached, deterministic build).
References: EAGLE (Li et al., 2024), Medusa (Cai et al., 2024), HASS (Zhang et al., 2024) for the unrolled steps.
"""
