"""benchmarks/pass_times.mjs: several graphs of one export timed in turn without the profiler, on the tiny export."""

import json
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Node runs the passes

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "pass_times.mjs"


def test_ours_and_the_stock_graph_are_timed_round_by_round(tiny_export, tiny_stock_graph):
    done = subprocess.run(["node", str(SCRIPT), "--model", str(tiny_export), "--graph", str(tiny_stock_graph), "--rounds", "2",
                           "--runs", "2"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    ours, theirs = report["graphs"]
    assert theirs["graph"] == str(tiny_stock_graph) and len(ours["rounds"]) == len(theirs["rounds"]) == 2
    assert ours["ratio_to_first"] == {"decode_1": 1, "verify_6": 1, "prefill_30": 1}
    assert all(value > 0 for value in (*ours["median_ms"].values(), *theirs["ratio_to_first"].values()))
