"""One token per pass: the algorithms of a lesson on speculative decoding, in pure Python.

The same package runs natively (tests, CLI) and in the reader's browser under
Pyodide, so nothing here imports numpy, onnxruntime or ``js``; the model is
reached only through the seam in ``seam.py`` (backends live in ``backends/``).

One module per idea of the lesson:

    greedy.py        one token per pass (step 2)
    all_at_once.py   one pass, a prediction at every position (step 3)
    verification.py  check a proposal in one pass (step 4)
    lookup.py        prompt lookup, a nearly free draft (step 5)
    drafted.py       generation with any proposer; the text equals greedy's
    proposers.py     the other proposers, and the one registry of them all by name
    sampling.py      the rule that keeps sampled output exact (step 6)
    speedup.py       expected tokens per pass and speed-up (steps 6-7)
    estimate.py      the alpha and c of a drafted run, as the speed-up formula sees them (step 6)

and, for the pages: ``contract.py``, every request and what it gives back;
``entry.py``, one entry point per kind of request (run natively by the build's
traces, and in the browser's worker), with ``generation.py``, the one run of a
generate request (the command line's too); ``tokens.py``, labels and streamed
text; ``defaults.py``, each panel's starting settings; and ``limits.py``: how
much one request may ask for.
"""
