"""How much the shipped draft's held-out α moves with the prompts it is measured on.

Assembles the committed draft for an export (``draft.shipped.assemble``, cached), measures its acceptance at γ = 1 on
each held-out chat request alone (``benchmarks/draft_prompts.json``, 64 new tokens, the build's cached answers), and
prints JSON: the pooled α (the figure ``draft.json`` states), α per prompt, and a bootstrap over the prompts (their
resampled pooled α's standard deviation and 95 % interval), the noise against which ``shipped.TOLERANCE`` is set.

    .venv/bin/python -m benchmarks.draft_noise --target EXPORT_DIR [--resamples 20000]
"""

import argparse
import json
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from draft import shipped
from draft.build import _held_out
from draft.export import OnnxDraft
from draft.simulate import acceptance, windowed
from draft.target import Target


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.draft_noise", description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=Path, required=True, help="the default model's export (python -m model_export)")
    parser.add_argument("--resamples", type=int, default=20_000)
    args = parser.parse_args(argv)
    folder = shipped.assemble(args.target, log=lambda message: None)
    runs = _held_out(Target(args.target), Tokenizer.from_file(str(args.target / "tokenizer.json")),
                     shipped.HELD_OUT_TOKENS, log=lambda message: None)
    draft = OnnxDraft(folder)
    each = [acceptance(windowed(draft, draft.window), [run], 1) for run in runs]
    right, tried = np.array([a.right[0] for a in each]), np.array([a.tried[0] for a in each])
    rng = np.random.default_rng(0)
    picks = rng.integers(0, len(each), (args.resamples, len(each)))
    pooled = right[picks].sum(1) / tried[picks].sum(1)
    print(json.dumps({"prompts": len(each), "alpha": round(float(right.sum() / tried.sum()), 4),
                      "alpha_by_prompt": [round(float(r / t), 3) for r, t in zip(right, tried)],
                      "bootstrap": {"resamples": args.resamples, "sd": round(float(pooled.std()), 4),
                                    "interval_95": [round(float(q), 4) for q in np.percentile(pooled, [2.5, 97.5])]},
                      "tolerance": shipped.TOLERANCE}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
