"""Size, quality and speed of an export, natively and in onnxruntime-web's WASM build.

    .venv/bin/python -m benchmarks.bench_export [--source default] [--baseline EXPORT]

Prints figures; asserts nothing (targets live in the closing notes and README,
not in timed tests). Speed is the median of repeated passes after a warm-up:
decode-1 and verify-6 after a 32-token past, and prefill-30 from empty.
Quality is top-1 agreement and KL against the export's own float32 reference
(the manifest's ``quantisation.reference`` says which model that is: since
issue 23, the tied model), on the held text (282 positions, the figure issue 23
quotes) and on a longer held-out text (``tests/data/quality_text.txt``, 1,758
positions), since one near-tie is 0.35 % of the held text. ``--baseline EXPORT``
(e.g. main's default export) prints that export's size, parameter count and
quality on the same texts.
"""

import argparse
import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

from model_export.build import build
from model_export.check import load, native_int8_products_exact, position_independence, quality, speed, wasm

ROOT = Path(__file__).resolve().parent.parent
QUALITY_TEXTS = ("held_text", "quality_text")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="default")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--baseline", type=Path, help="an export folder to compare size and quality with")
    args = parser.parse_args()

    folder = build(args.source, log=lambda message: print(message, file=sys.stderr))
    manifest = json.loads((folder / "manifest.json").read_text())
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    texts = {name: tokenizer.encode((ROOT / "tests" / "data" / f"{name}.txt").read_text()).ids for name in QUALITY_TEXTS}
    held = texts["held_text"]
    figures = {"model": manifest["model"]["name"], "graph": manifest["graph"],
               # False on x86 without VNNI: the native quality figures are then that processor's (model_export/check.py)
               "native_int8_exact": native_int8_products_exact(), **_size_and_quality(folder, texts)}
    if args.baseline:
        figures["baseline"] = {"export": str(args.baseline), **_size_and_quality(args.baseline, texts)}
    for threads in (1, 2):
        decoder = load(folder, threads)
        figures[f"native_{threads}t"] = {
            **speed(decoder, held),
            "position_independent": position_independence(decoder, held[:80])["all_identical"],
        }
        result = wasm(folder, held[:80], threads, bench=True)
        figures[f"wasm_{threads}t"] = {**result.get("bench", {}), "load_ms": result.get("load_ms"),
                                       "position_independent": result["all_identical"], "threads": result["threads"]}
    print(json.dumps(figures, indent=2) if args.json else _table(figures))


def _size_and_quality(folder: Path, texts: dict[str, list[int]]) -> dict:
    manifest = json.loads((folder / "manifest.json").read_text())
    model, reference = load(folder, 2), load(folder, 2, reference=True)
    return {
        "size_mb": round(sum(f["size"] for f in manifest["files"] if f["name"] == manifest["graph"]) / 1e6, 1),
        "parameters": manifest["model"]["parameters"],
        "word_tables": manifest["model"].get("word_tables", {"tables": 2}),
        "quality": {name: quality(model, reference, ids) for name, ids in texts.items()},
        "reference": manifest["quantisation"].get("reference", "the float32 export of the same model"),
    }


def _quality_line(quality_: dict) -> str:
    return "; ".join(f"{name} {q['top1_agreement']:.1%} over {q['positions']} positions, KL {q['kl_fp32_to_int8']:.4f}"
                     for name, q in quality_.items())


def _table(figures: dict) -> str:
    lines = [
        f"model         {figures['model']}",
        f"size          {figures['size_mb']} MB ({figures['graph']}), {figures['parameters']:,} parameters, "
        f"{figures['word_tables']['tables']} word table(s)",
        f"quality       top-1 agreement with float32: {_quality_line(figures['quality'])}",
        f"reference     {figures['reference']}",
        *([] if figures["native_int8_exact"] else ["native        this processor's onnxruntime saturates int8 products "
                                                   "(no VNNI): native quality is its own, not the tab's"]),
        "",
        f"{'backend':<12}{'decode-1 ms':>12}{'verify-6 ms':>12}{'prefill-30 ms':>14}  position-independent",
    ]
    for key in ("native_1t", "native_2t", "wasm_1t", "wasm_2t"):
        row = figures[key]
        lines.append(f"{key:<12}{row.get('decode_1_ms', float('nan')):>12.1f}{row.get('verify_6_ms', float('nan')):>12.1f}"
                     f"{row.get('prefill_30_ms', float('nan')):>14.1f}  {row['position_independent']}")
    if "baseline" in figures:
        base = figures["baseline"]
        lines += ["", f"baseline      {base['export']}: {base['size_mb']} MB, {base['parameters']:,} parameters, top-1 "
                      f"{_quality_line(base['quality'])} (against {base['reference']})"]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
