"""Step 6's sampling test on the live model: the target p after a text, and drafts q to test the rule with.

The target is the model's own next-token distribution after the reader's
text: its top k tokens (the export's ``top_k`` probabilities, out of the whole
vocabulary) and everything else lumped into one outcome, "other", so p sums to
one over k + 1 outcomes. The speculative rule (``sampling.py``) treats "other"
like any token: the test is whether the kept tokens follow p, whatever q was.

The drafts, each a different kind of proposer:

- ``flattened``: p with its peaks flattened (p^(1/2), renormalised), as a
  smaller, less certain model of the same family would give;
- ``one-hot``: all on the model's second choice, as prompt lookup proposes a
  single token with certainty (and a wrong one, so the remainder is needed);
- ``uniform``: every outcome alike, a draft that knows nothing.

Beside them, ``MODEL_DRAFT``: the real pair, q the site's draft model's after the same text.
"""

FLATTENING = 0.5  # the exponent of the flattened draft: between p itself (1) and uniform (0)
DRAFTS = ("flattened", "one-hot", "uniform")
MODEL_DRAFT = "model"


def target(topk_probs: list[float]) -> list[float]:
    """The top-k probabilities and "other" (the rest of the vocabulary), as one distribution."""
    other = max(0.0, 1.0 - sum(topk_probs))  # rounding may push the top k a hair over one
    total = sum(topk_probs) + other
    return [p / total for p in [*topk_probs, other]]


def draft(p: list[float], kind: str) -> list[float]:
    """A draft distribution over the same outcomes as ``p``."""
    if kind == "flattened":
        weights = [p_i ** FLATTENING for p_i in p]
    elif kind == "one-hot":
        second = sorted(range(len(p)), key=lambda i: p[i], reverse=True)[1]
        weights = [1.0 if i == second else 0.0 for i in range(len(p))]
    elif kind == "uniform":
        weights = [1.0] * len(p)
    else:
        raise ValueError(f"unknown draft {kind!r}: expected one of {', '.join(DRAFTS)}")
    total = sum(weights)
    return [w / total for w in weights]
