"""Checking a proposed continuation with one pass (greedy verification).

Feed the text and the draft together. Thanks to the causal mask, the row after
the text and the row after each draft token hold exactly the tokens greedy
decoding would pick there — provided the draft so far is what greedy would
have written. So the draft is accepted up to its first disagreement, and the
model's own token replaces the rest; when every draft token is accepted, the
row after the last one gives one more token for free (the bonus token).

References: Stern, Shazeer & Uszkoreit, "Blockwise Parallel Decoding for Deep
Autoregressive Models" (2018); Leviathan, Kalman & Matias, "Fast Inference from
Transformers via Speculative Decoding" (2023), greedy case.
"""

from dataclasses import dataclass
from typing import Protocol

from .seam import Pass, Session
from .trace import PassRecord


class FeatureReader(Protocol):
    """A draft model's side of a pass (``draft_model.ModelDraft``): it reads the target's features."""

    wanted: int  # the features it needs before a draft: those of the last ``wanted`` tokens of the text

    def keep(self, first: int, rows: list[list[float]]) -> None:
        """The target's features at positions ``first``, ``first + 1``, ..."""


@dataclass(frozen=True)
class Verdict:
    accepted: list[int]  # the draft's longest prefix that agrees with the model
    token: int  # the model's token right after the accepted prefix: a correction, or the bonus
    predicted: list[int]  # the model's token after the text and after each draft token

    @property
    def proposed(self) -> int:
        return len(self.predicted) - 1

    @property
    def bonus(self) -> bool:
        """The whole (non-empty) draft was right, so ``token`` came free."""
        return self.proposed > 0 and len(self.accepted) == self.proposed


def verify(draft: list[int], predicted: list[int]) -> Verdict:
    """Accept ``draft`` up to the first token where ``predicted`` (one longer than the draft) differs."""
    if len(predicted) != len(draft) + 1:
        raise ValueError(f"need one prediction per draft token plus one, got {len(predicted)} for {len(draft)}")
    agreed = 0
    # Stop at the first disagreement: every later prediction is conditioned on a token greedy would not write.
    while agreed < len(draft) and draft[agreed] == predicted[agreed]:
        agreed += 1
    return Verdict(accepted=draft[:agreed], token=predicted[agreed], predicted=predicted)


async def check(session: Session, text: list[int], draft: list[int], eos_ids: frozenset[int] = frozenset(),
                features: FeatureReader | None = None) -> tuple[Verdict, PassRecord]:
    """One pass over the part of ``text`` the session has not seen, plus ``draft``; then verify.

    Afterwards the session holds the text and the whole draft: a caller that
    goes on generating rolls back the rejected tokens. The record's ``added``
    ends at the first end-of-text id, if any. ``features`` hears the target's
    features at every position the pass fed, or at the last ``wanted`` of a
    longer text.
    """
    start, fed, result = await verifying_pass(session, text, draft, features)
    verdict = verify(draft, result.argmax)
    record = PassRecord(start=start, fed=fed, draft=draft, predicted=verdict.predicted, accepted=len(verdict.accepted),
                        token=verdict.token, added=until_end(verdict.accepted + [verdict.token], eos_ids),
                        seconds=result.seconds)
    return verdict, record


async def verifying_pass(session: Session, text: list[int], draft: list[int],
                         features: FeatureReader | None = None) -> tuple[int, list[int], Pass]:
    """The pass that checks ``draft``: over the part of ``text`` the session has not seen, plus ``draft``, with
    rows after the text's last token and after each draft token; ``features`` hears the target's features.
    Returns where the fed tokens start, the fed tokens and the pass (``sampled.py`` verifies by its own rule)."""
    if not 0 <= session.length < len(text):
        raise ValueError(f"the session must hold less than the text ({session.length} of {len(text)} tokens)")
    start, fed = session.length, text[session.length:] + draft
    hidden = min(len(fed), features.wanted + len(draft)) if features else 0
    # The rows that matter, and the only ones computed: after the text's last token, then after each draft token.
    result = await session.forward(fed, rows_from=len(fed) - len(draft) - 1, hidden=hidden)
    if features:
        features.keep(start + len(fed) - hidden, result.hidden)
    return start, fed, result


def until_end(tokens: list[int], eos_ids: frozenset[int]) -> list[int]:
    """``tokens`` up to and including the first end-of-text id: generation stops there."""
    for i, token in enumerate(tokens):
        if token in eos_ids:
            return tokens[:i + 1]
    return tokens
