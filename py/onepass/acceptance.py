"""What a run measured of its draft: the acceptance rate at each draft position, and the draft's cost.

A round drafts up to gamma tokens; draft position j is *reached* when the tokens before it were accepted, and
*accepted* when it agrees with the target too. alpha_j = accepted_j / reached_j is the chance that the j-th
drafted token is right given that the earlier ones were: the formula's alpha (``speedup.py``) assumes every
alpha_j equal, which a real draft does not quite do (later tokens follow the draft's own guesses).
"""

from collections.abc import Iterable

from .contract import Position
from .trace import PassRecord


def per_position(passes: Iterable[PassRecord]) -> list[Position]:
    """Per draft position 1, 2, ...: how often it was reached, how often accepted, and their ratio."""
    reached: list[int] = []
    accepted: list[int] = []
    for record in passes:
        for j in range(len(record.draft)):
            if j == len(reached):
                reached.append(0)
                accepted.append(0)
            reached[j] += 1
            if record.accepted <= j:
                break  # the first rejection: later positions were drafted but never reached
            accepted[j] += 1
    return [Position(position=j + 1, reached=r, accepted=a, alpha=a / r) for j, (r, a) in enumerate(zip(reached, accepted))]


def mean_alpha(passes: Iterable[PassRecord]) -> float | None:
    """Accepted draft tokens over reached ones, all positions together (None when nothing was drafted)."""
    rows = per_position(passes)
    reached = sum(row["reached"] for row in rows)
    return sum(row["accepted"] for row in rows) / reached if reached else None


def cost_ratio(draft_seconds: float, draft_passes: int, target_seconds: float, target_passes: int) -> float | None:
    """c: one small pass of the draft in passes of the target (a one-token pass of one-at-a-time decoding)."""
    if not draft_passes or not target_passes or target_seconds <= 0:
        return None
    return (draft_seconds / draft_passes) / (target_seconds / target_passes)
