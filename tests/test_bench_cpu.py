"""benchmarks/cpu.py: the processor time of a window, by thread name, counts work done in another thread."""

import threading
import time

import pytest

from benchmarks.cpu import PROC, CpuSampler

pytestmark = pytest.mark.skipif(not (PROC / "stat").exists(), reason="needs Linux's /proc")


def spin(seconds: float) -> None:
    """Busy for ``seconds`` of this thread's own processor time (not the wall clock's: on a loaded machine a thread
    spinning for half a second of wall clock may get a part of it only)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_a_thread_busy_for_half_a_second_is_counted():
    done, end = threading.Event(), threading.Event()

    def work():
        spin(0.5)
        done.set()
        end.wait()  # alive until the sampler has read it: a thread that has ended is counted in the total only

    worker = threading.Thread(target=work)
    with CpuSampler() as cpu:
        worker.start()
        done.wait()
    end.set()
    worker.join()
    figures = cpu.figures
    # Linux names a Python thread after its process (threading's names are Python's own), so look for the time.
    assert figures["busy_core_s"] >= 0.4 and figures["busiest_thread"]["seconds"] >= 0.4
    assert 0 < figures["busy_share"] <= 1.05 and figures["cores"] >= 1 and figures["wall_s"] >= 0.5
    assert sum(figures["by_thread_name_s"].values()) >= 0.4
