"""Export one source several times, each in a fresh cache of its own, and print each ``model.onnx``'s sha256.

    .venv/bin/python -m benchmarks.export_repeat [--source default] [--times 3]

Each export runs in a process of its own, as ``make model`` runs it; the cache's downloaded sources are linked into
each fresh cache, so nothing is downloaded again. Every line the same is what the exporter promises (one export of a
source on every processor: benchmarks/FINDINGS.md, "One export on every processor"); a line that differs is the
nondeterminism of "The GGUF read in one sweep, and one export in fourteen that came out different". Takes about 3
minutes an export for the real model.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from model_export.cache import cache_root, sha256_file


def export_once(source: str) -> tuple[str, float]:
    with tempfile.TemporaryDirectory(prefix="onepass-repeat-") as folder:
        cache = Path(folder)
        (cache / "sources").mkdir()
        for kept in (cache_root() / "sources").glob("*"):
            if kept.is_file():
                (cache / "sources" / kept.name).symlink_to(kept)
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "model_export", "--source", source], capture_output=True,
                              text=True, env={**os.environ, "ONEPASS_CACHE": str(cache)})
        if done.returncode != 0:
            raise SystemExit(done.stderr[-2000:])
        export = Path(done.stdout.strip().splitlines()[-1])
        return sha256_file(export / "model.onnx"), time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="default")
    parser.add_argument("--times", type=int, default=3)
    args = parser.parse_args()
    seen = set()
    for run in range(1, args.times + 1):
        digest, seconds = export_once(args.source)
        seen.add(digest)
        print(f"{run}: model.onnx {digest[:16]}… in {seconds:.0f} s", flush=True)
    print("every export the same" if len(seen) == 1 else f"{len(seen)} different exports of one source")


if __name__ == "__main__":
    main()
