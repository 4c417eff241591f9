"""The browser backend's pass clock: a pass's wall time split into what was measured and Python's rest."""

import pytest

from onepass.backends.clock import PassClock


class Ticks:
    """A clock the test moves by hand."""

    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_lap_splits_the_wall_time_and_python_is_the_rest():
    ticks = Ticks()
    clock = PassClock(ticks)
    ticks.t += 0.010
    clock.add(model=0.006, kv=0.001, bridge=0.0015)
    clock.add(kv=0.0005, bridge=0.0002)  # a rollback after the pass
    assert clock.lap() == pytest.approx({"model": 0.006, "kv": 0.0015, "bridge": 0.0017, "python": 0.0008})


def test_start_begins_the_next_pass_from_nothing():
    ticks = Ticks()
    clock = PassClock(ticks)
    clock.add(model=1.0)
    ticks.t += 2.0
    clock.lap()
    ticks.t += 5.0  # handing the pass on: timed elsewhere, counted in no lap
    clock.start()
    ticks.t += 0.5
    clock.add(model=0.25)
    assert clock.lap() == pytest.approx({"model": 0.25, "kv": 0.0, "bridge": 0.0, "python": 0.25})


def test_no_part_is_ever_negative():
    ticks = Ticks()
    clock = PassClock(ticks)
    ticks.t += 0.001
    clock.add(model=0.002, bridge=-0.0001)  # two clocks' jitter: the JavaScript side measured more than the call
    assert clock.lap() == {"model": 0.002, "kv": 0.0, "bridge": 0.0, "python": 0.0}
