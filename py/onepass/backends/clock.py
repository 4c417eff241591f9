"""Where one pass's time goes in the browser, measured as the pass happens ("Under the hood").

The browser backend adds what it measured during a pass — the model's own run
and the KV cache's handling (building feeds, keeping the present tensors,
cutting the cache back), both timed in JavaScript beside the session
(bridge.js's OnnxBridge), and the bridge (crossing between Python and
JavaScript and converting what crosses: a pass, a rollback, the tokenizer's
labels and text), timed in ``browser.py`` around each crossing — and ``lap``
splits the wall time since the last pass into those and the rest, which is
Python's own: the proposer, verification and building the pass record and its
event. Each part is measured in that one place. The clock is passed in, so the
split is testable exactly.
"""

import time
from collections.abc import Callable

PARTS = ("model", "kv", "bridge")


class PassClock:
    def __init__(self, now: Callable[[], float] = time.perf_counter):
        self.now = now
        self.start()

    def start(self) -> None:
        """A pass begins now (the run's first, or the next once the last was handed on); nothing is counted yet."""
        self.began = self.now()
        self.spent = dict.fromkeys(PARTS, 0.0)

    def add(self, **seconds: float) -> None:
        """Seconds measured inside the pass, by part (a negative jitter of the clocks counts as nothing)."""
        for part, value in seconds.items():
            self.spent[part] += max(0.0, value)

    def lap(self) -> dict[str, float]:
        """This pass's seconds by part since ``start``, with the rest of its wall time as ``python``."""
        wall = self.now() - self.began
        return {**self.spent, "python": max(0.0, wall - sum(self.spent.values()))}
