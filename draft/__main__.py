"""``python -m draft --target EXPORT_DIR [--seed 0]``: build (or reuse) the draft for an export; print its folder.

Run from the repository root with ``py`` on the path (``PYTHONPATH=py``), as the site's hooks do. A target for
which no draft can be built (no ``hidden`` output, two word tables) exits with status 3 and says why.
"""

import argparse
import sys
from pathlib import Path

from .build import build
from .target import DraftUnavailable


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draft", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=Path, required=True, help="the model export's folder (python -m model_export)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="rebuild even if the cache holds this draft")
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731 - stdout carries only the folder
    try:
        folder = build(args.target, seed=args.seed, force=args.force, log=log)
    except DraftUnavailable as error:
        print(f"draft: no draft for this model: {error}", file=sys.stderr)
        return 3
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
