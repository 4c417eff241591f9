"""Where a window's processor time went, from Linux's /proc: the whole machine and every thread, by thread name.

A load on a 2-core machine is bound by the work both cores do, not by the order it is done in
(benchmarks/FINDINGS.md, "Download size"): this says how much work there was and which threads did it::

    with CpuSampler() as cold:
        ...                              # open the page, load the model, run a pass
    cold.figures  # {"wall_s", "busy_core_s", "cores", "busy_share", "by_thread_name_s", "busiest_thread"}

Chromium names its threads (``DedicatedWorker`` for every web worker, ``ThreadPoolForeg`` for its pool, which
compiles WebAssembly and does I/O, ``Chrome_ChildIOT`` for IPC); the figures count every process on the machine,
so a local server's and the test driver's time are in them too, under their own names. A thread that ends inside
the window is in the machine's total only (its /proc entry is gone by the end). Empty where there is no /proc.
"""

import os
import re
import time
from pathlib import Path

PROC = Path("/proc")
SHOWN = 8  # thread names listed, busiest first


def _threads() -> dict:
    """{(pid, tid): (name, seconds of processor time)} of every thread that can be read."""
    tick = os.sysconf("SC_CLK_TCK")
    threads = {}
    for task in PROC.glob("[0-9]*/task/[0-9]*"):
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue  # ended meanwhile
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        threads[(task.parent.parent.name, task.name)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return threads


def _busy() -> float:
    """Seconds of processor time the machine has spent not idle, all cores together."""
    values = [int(v) for v in (PROC / "stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


class CpuSampler:
    """The processor time spent between ``__enter__`` and ``__exit__`` (see the module's docstring)."""

    def __init__(self):
        self.figures: dict = {}

    def __enter__(self):
        self.available = (PROC / "stat").exists()
        if self.available:
            self.threads, self.busy, self.began = _threads(), _busy(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        if not self.available:
            return False
        wall, busy, threads = time.perf_counter() - self.began, _busy() - self.busy, _threads()
        spent = {key: seconds - self.threads.get(key, (name, 0.0))[1] for key, (name, seconds) in threads.items()}
        by_name: dict = {}
        for key, seconds in spent.items():
            name = re.sub(r"[0-9]+$", "", threads[key][0]).strip()
            by_name[name] = by_name.get(name, 0.0) + seconds
        busiest = max(spent, key=spent.get)
        cores = os.cpu_count() or 1
        self.figures = {
            "wall_s": round(wall, 2), "busy_core_s": round(busy, 2), "cores": cores,
            "busy_share": round(busy / (cores * wall), 2),
            "by_thread_name_s": {name: round(s, 2) for name, s in sorted(by_name.items(), key=lambda x: -x[1])[:SHOWN]
                                 if s >= 0.01},
            "busiest_thread": {"name": threads[busiest][0], "seconds": round(spent[busiest], 2)},
        }
        return False
