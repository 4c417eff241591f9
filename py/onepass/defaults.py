"""The pages' defaults: each model panel's starting text and settings, decided once.

The build writes ``DEFAULTS`` into the site as a JavaScript module
(``hooks/contract.py``: ``panels/defaults.js``), and records the panels' default
runs from it (``hooks/traces.py``), so a page and its recorded run start from
the same text. A request's own defaults are the contract's (``contract.py``);
these are what a panel fills its fields with before the reader types.
"""

from . import contract
from .drafts import DRAFTS, MODEL_DRAFT
from .editable import DEFAULT_SOURCE
from .examples import EXAMPLES, chat
from .policy import PROPOSE

CAPITALS = "The capital of France is Paris. The capital of Germany is"
PRESET_P = [0.35, 0.2, 0.15, 0.12, 0.1, 0.08]  # step 6's target over its six words; the presets differ in q
DEFAULTS = {
    "greedy": {"text": CAPITALS, "maxNew": 16},  # enough to watch the loop; each token costs a pass
    # The measurement: a median of a few runs per size, since a single pass time is noisy in a browser tab.
    "all-at-once": {"text": CAPITALS + " Berlin.", "measureSizes": [5, 30], "measureRuns": 5},
    "guess": {
        "text": CAPITALS,
        "guess": " Berlin.",
        # The "Try" guesses; "Right throughout" is the model's own next tokens, this many, computed.
        "tries": {"early": " Munich, the largest city of Bavaria", "spacing": "Berlin."},  # no space: another token
        "continuationTokens": 6,
    },
    "lookup": {
        # The reader's own text, written long enough to see copies pay off; the examples bring their own.
        "text": "The cat sat on the mat. The dog sat on the rug. The cat sat on the",
        "maxNew": 48,
        "examples": [example.as_dict() for example in EXAMPLES],
        "proposer": DEFAULT_SOURCE,
    },
    # "Under the hood": a run to time pass by pass, and which of step 5's examples its profile runs.
    "generate": {"text": "The capital of France is Paris. The capital of Italy is", "maxNew": 24, "profiled": EXAMPLES[0].key},
    # Step 6's live draft model: a request of the kind it was trained on (a coding question, sent as a chat turn:
    # the draft learned from the model's answers) but not one of its training requests (tests/test_draft.py), long
    # enough a run for its alpha and c to mean something; its draft length the contract's default, which the reader
    # changes. Typed bare, an instruction is continued, not answered, in text the draft never saw
    # (benchmarks/FINDINGS.md, "Step 6 sends the reader's text as a chat turn").
    # Copy first and each round weighed, ticked at first: the cheapest drafts first and the draft model only where
    # it pays, the fastest of the modes in the tab (benchmarks/FINDINGS.md, "Step 6 copies first and weighs each
    # round"); unticked, the draft model alone drafts every round.
    "draft": {"text": "Write a Python function that reverses the words in a sentence.", "chat": True, "maxNew": 48,
              "gamma": contract.Generate.gamma, "copyFirst": True, "adaptive": True,
              "propose": PROPOSE,  # "Only where it pays": the draft's confidence under which it proposes nothing
              # What the request's ``chat`` puts around the text, for the page to show while the run goes on.
              "chatTurn": dict(zip(("before", "after"), chat("\0").split("\0"), strict=True))},
    "sampling": {
        # Presets over six made-up words (no model), every p and q editable; and the live model's p after a text.
        "words": ["the", "cat", "sat", "on", "a", "mat"],
        "presets": {name: {"p": PRESET_P, "q": q} for name, q in {
            "A rough draft": [0.1, 0.1, 0.3, 0.1, 0.3, 0.1],
            "A good draft": [0.3, 0.22, 0.15, 0.13, 0.1, 0.1],
            'A draft that never says "cat"': [0.3, 0, 0.3, 0.15, 0.15, 0.1],
        }.items()},
        "drafts": [*DRAFTS, MODEL_DRAFT],  # the last when the site ships a draft model
        "text": "The capital of France is",
        "draws": 10_000,
    },
}
