"""The draft model: a small network trained by this repository from the shipped target model itself (frozen).

``python -m draft --target EXPORT_DIR`` prints the folder of the draft for an export, as the site ships it: the
committed draft (``shipped.py``, ``draft/shipped/``) assembled with the export's word table, or, where none is
committed for the model, a quick one trained here (``build.py``); ``DraftUnavailable``
(``onepass.backends.native``) for a model that cannot have one (its export has no ``hidden`` output, or two word
tables). The folder holds:

- ``draft.onnx`` (opset 18, int8 MatMulInteger with per-row activation scales, ops onnxruntime-web runs):
  inputs ``features`` float32 [1, n, d] (the target's features at positions i .. i+n-1, or the draft's own) and
  ``tokens`` int64 [1, n] (the tokens at i+1 .. i+n), each row on its own (window 1); outputs ``feature``
  float32 [1, n, d] (predicted features at i+1 .. i+n), ``argmax`` int64 [1, n] (the full-vocabulary id of the best
  next token after each row), ``probs`` float32 [1, n, S] (softmax over the readout subset) and ``vocab`` int64 [S]
  (the subset's ids, in the order of ``probs``);
- ``answers.json``: what the target wrote after the same 2-4 tokens in its training answers (``answers.py``);
- ``draft.json``: format, design, window, hidden_size, readout_size, parameters, target {identity, name},
  files [{name, size, sha256}], answers, training {shipped?, seed, tokens, sources with licences, ...},
  acceptance {held-out α per position and tokens per pass per γ}.

A draft round (stateless): the last row carries (the target's feature at p - 1, token p); its ``argmax`` is the guess
for p + 1; feed (its ``feature``, that guess) for p + 2, and so on.

Stages, one module each: ``instructions`` and ``corpus`` (the requests, and the target's own greedy answers to them in
committed shards), ``target`` (the int8 export natively, through ``onepass``'s ``NativeModel``: features and argmax),
``data`` (the target's features and choices over texts), ``heads`` (the design), ``train`` (fitting it), ``export``
(the shipped graph), ``simulate`` (acceptance per draft position on held-out prompts), ``shipped`` (training once,
assembling in the build), ``build`` (the quick build for other models). The designs measured and not shipped are
``benchmarks/draft_variants.py``. References: EAGLE (Li et al., 2024), HASS (Zhang et al., 2024) for the unrolled
steps, REST (He et al., 2023) for the answers' table.
"""
