"""The two sessions of every in-process backend (native onnxruntime, the toy): cache on and cache off.

A backend gives them two things: ``run(ids, past, logits, first_row, hidden)``,
one pass over ``ids`` after ``past`` (None: nothing before) that returns the
``Pass`` of the rows from ``first_row`` on (and the features of the last
``hidden`` positions) and the new past; and ``cut(past,
length)``, that past as it was after ``length`` tokens. What a past is (KV
tensors, or the toy's ids) is the backend's business. The browser's sessions
keep their KV cache in JavaScript (``browser.py``).
"""

from typing import Any, Protocol

from ..seam import Pass, check_rows


class Runs(Protocol):
    def run(self, ids: list[int], past: Any, logits: bool, first_row: int, hidden: int = 0) -> tuple[Pass, Any]:
        """One pass over ``ids`` after ``past``: the rows from ``first_row`` on, and the new past."""

    def cut(self, past: Any, length: int) -> Any:
        """``past`` as it was after its first ``length`` tokens."""


def checked(length: int) -> int:
    if length < 0:
        raise ValueError(f"cannot roll back to a negative length ({length})")
    return length


class CachedSession:
    """Cache on: a pass reads only the new tokens on top of the past it keeps; rollback cuts that past."""

    def __init__(self, model: Runs):
        self.model = model
        self.past = None
        self.length = 0

    async def forward(self, new_ids: list[int], *, logits: bool = False, rows_from: int = 0,
                      hidden: int = 0) -> Pass:
        check_rows(new_ids, rows_from, hidden)
        result, self.past = self.model.run(list(new_ids), self.past, logits, rows_from, hidden)
        self.length += len(new_ids)
        return result

    def rollback(self, length: int) -> None:
        if checked(length) < self.length:
            self.past = self.model.cut(self.past, length)
            self.length = length


class UncachedSession:
    """Cache off: every pass re-reads the whole text so far, as the original station did."""

    def __init__(self, model: Runs):
        self.model = model
        self.ids: list[int] = []

    @property
    def length(self) -> int:
        return len(self.ids)

    async def forward(self, new_ids: list[int], *, logits: bool = False, rows_from: int = 0,
                      hidden: int = 0) -> Pass:
        check_rows(new_ids, rows_from, hidden)
        ids = self.ids + list(new_ids)
        # Only the new tokens' rows (from rows_from), so both cache modes look the same to the algorithms.
        result, _ = self.model.run(ids, None, logits, len(self.ids) + rows_from, hidden)
        self.ids = ids
        return result

    def rollback(self, length: int) -> None:
        del self.ids[checked(length):]
