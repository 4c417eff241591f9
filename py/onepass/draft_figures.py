"""What a run with the draft model measured (step 6): its small passes and their seconds, alpha per draft position,
and, against one at a time on the same text, c, the formula's speed-up at them and its best draft length.

c compares a small pass with one of one-at-a-time's passes after its first: the first reads the whole text, and
costs as much with a draft as without one (the drafted run's first pass drafts nothing either).
"""

from .acceptance import cost_ratio, mean_alpha, per_position
from .contract import DraftFigures
from .draft_model import ModelDraft
from .speedup import best_gamma, speedup
from .trace import Run

ROUNDS = ("draft", "copy", "answers", "skipped", "withheld", "none")  # what a draft mode's round checked (``ModelDraft.kinds``)


def draft_figures(propose: ModelDraft, run: Run, baseline: Run | None) -> DraftFigures:
    """The figures of ``run``, drafted by ``propose``; c and what needs it only with the ``baseline`` run."""
    own, copies = propose.split(run.passes)  # "lookup+draft"'s copies are not the draft model's
    alpha = mean_alpha(own)
    c = None
    if baseline and len(baseline.passes) > 1:
        after_first = baseline.passes[1:]
        c = cost_ratio(propose.seconds, propose.passes, sum(r.seconds for r in after_first), len(after_first))
    known = alpha is not None and c is not None
    best = best_gamma(alpha, c) if known else None
    return DraftFigures(gamma=propose.gamma, window=propose.draft.window, passes=propose.passes,
                        seconds=propose.seconds, acceptance=per_position(own), alpha=alpha, c=c,
                        predicted=speedup(alpha, propose.gamma, c) if known else None, best_gamma=best,
                        best_predicted=speedup(alpha, best, c) if known else None,
                        copies=len(copies), copied_tokens=sum(record.accepted for record in copies),
                        from_answers=propose.kinds.count("answers"), adaptive=propose.policy is not None,
                        rounds={kind: propose.kinds.count(kind) for kind in ROUNDS}, stopped=propose.stopped,
                        policy=propose.policy.figures() if propose.policy is not None else None)
