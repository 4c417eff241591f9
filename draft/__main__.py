"""``python -m draft --target EXPORT_DIR``: the draft for an export, as the site ships it; print its folder.

For the model the repository ships a trained draft for (``draft/shipped/``), the draft is assembled from it in
seconds and nothing is trained (``shipped.assemble``). For another model, a quick draft is trained here
(``build.build``: seconds for the tiny test model, some twenty minutes for a 0.5B one), unless ``--no-train`` (or
``ONEPASS_DRAFT=none``) asks for none. A model for which no draft can be had exits with status 3 and says why.

``--retrain`` is the developer's ``make draft``: train the shipped draft again from the committed corpus and write
``draft/shipped/``. Its longest part, the target's features over every shard, is kept in the cache a shard at a time
(``shipped.shard_sequences``); ``--features`` makes only those, so they can be made ahead, over several sittings.
"""

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path

from onepass.backends.native import DraftUnavailable

from . import shipped
from .build import build


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m draft", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=Path, required=True, help="the model export's folder (python -m model_export)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--force", action="store_true", help="rebuild a quick draft even if the cache holds it")
    parser.add_argument("--no-train", action="store_true", help="no quick draft for a model without a shipped one")
    parser.add_argument("--retrain", action="store_true", help="train the shipped draft from the committed corpus")
    parser.add_argument("--features", action="store_true", help="only the target's features over the committed "
                        "shards, into the cache, a shard at a time (--retrain's longest part; stop and go on any time)")
    parser.add_argument("--shards", type=int, default=None, help="with --retrain or --features: the corpus's first N "
                        "shards only")
    parser.add_argument("--epochs", type=int, default=None, help="with --retrain: epochs over the data instead of the "
                        "shipped recipe's (what ran is written in draft.json)")
    args = parser.parse_args(argv)
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731 - stdout carries only the folder
    try:
        if args.features:
            from .target import Target

            target = Target(args.target, arena=False)
            for path in shipped.corpus.paths(args.shards):
                shipped.shard_sequences(target, path, log)  # each shard's kept, none held in memory
            return 0
        if args.retrain:
            recipe = shipped.RECIPE if args.epochs is None else replace(shipped.RECIPE, epochs=args.epochs)
            shipped.train(args.target, args.shards, args.seed, recipe=recipe, log=log)
            return 0
        try:
            folder = shipped.assemble(args.target, log=log)
            log("draft: the shipped draft, assembled with this model's word table (nothing trained)")
        except DraftUnavailable as why:
            if args.no_train or os.environ.get("ONEPASS_DRAFT") == "none":
                raise
            log(f"draft: {why}; training a quick one here")
            folder = build(args.target, seed=args.seed, force=args.force, log=log)
    except DraftUnavailable as error:
        print(f"draft: no draft for this model: {error}", file=sys.stderr)
        return 3
    print(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
