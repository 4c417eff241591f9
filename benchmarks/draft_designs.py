"""Which draft design to ship: EAGLE's one layer against Medusa's heads, trained on the same data, measured alike.

Prints JSON: the data's size, the readout's vocabulary coverage, each design's parameters, training time, and
acceptance per draft position on the held-out chat prompts (``benchmarks/draft_prompts.json``) at several
draft lengths. The target here is the float32 model the export starts from (PyTorch), so the figures compare
designs; the shipped draft's own figures come from its benchmark on the int8 file.

    .venv/bin/python -m benchmarks.draft_designs [--subset 16384] [--epochs 4] [--chunks 160]
"""

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from draft import data as draft_data
from draft.heads import Eagle, Medusa, Readout, parameters
from draft.instructions import instructions
from draft.simulate import acceptance
from draft.train import fit
from model_export.cache import cache_root
from model_export.sources import resolve
from onepass.examples import chat

PROMPTS = Path(__file__).with_name("draft_prompts.json")


def held_out(model, tokenizer, max_new: int):
    prompts = [chat(p) for p in json.loads(PROMPTS.read_text())]
    ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    answers = draft_data.greedy_answers(model, tokenizer, prompts, max_new)
    full = [p + a for p, a in zip(ids, answers)]
    hidden, _ = draft_data.teacher_forced(model, full)
    return [(torch.tensor(f), h, len(p)) for f, h, p in zip(full, hidden, ids)]


def cached(path: Path, make):
    """What ``make()`` returns, kept at ``path`` for the next run (the data take minutes; the designs, seconds)."""
    if path.exists():
        return torch.load(path, weights_only=False)
    value = make()
    torch.save(value, path)
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", type=int, default=16384)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=160)
    parser.add_argument("--mlp", type=int, default=2432)
    parser.add_argument("--designs", default="eagle,medusa")
    args = parser.parse_args()
    torch.set_num_threads(2)
    log = lambda text: print(text, file=sys.stderr, flush=True)  # noqa: E731
    store = cache_root() / "draft-research"
    store.mkdir(parents=True, exist_ok=True)
    loaded = resolve("default").load()
    model, tokenizer = loaded.model, loaded.tokenizer
    began = time.perf_counter()
    data = draft_data.join(cached(store / "chat.pt", lambda: draft_data.chat_data(model, tokenizer, instructions())),
                           cached(store / f"text-{args.chunks}.pt",
                                  lambda: draft_data.text_data(model, tokenizer, args.chunks)))
    data_s = time.perf_counter() - began
    runs = cached(store / "held-out.pt", lambda: held_out(model, tokenizer, 64))
    log(f"data: {len(data)} sequences, {data.tokens()} tokens, {data_s:.0f} s")

    table = model.get_output_embeddings().weight.detach()
    counts = torch.bincount(torch.cat(data.argmax), minlength=table.shape[0])
    ids = draft_data.written_tokens(tokenizer, data, args.subset, table.shape[0])
    answers = torch.cat([r[0][r[2]:] for r in runs])
    embedding = model.get_input_embeddings().weight.detach()
    report = {"data": {"sequences": len(data), "tokens": data.tokens(), "seconds": round(data_s)},
              "subset": {"size": args.subset,
                         "train_coverage": float(counts[ids].sum() / counts.sum()),
                         "held_out_coverage": float(torch.isin(answers, ids).float().mean())},
              "designs": {}}
    cfg = model.config
    for name in args.designs.split(","):
        readout = Readout(table, ids)
        if name == "eagle":
            head = Eagle(embedding, readout, cfg.num_attention_heads, cfg.num_key_value_heads, args.mlp, cfg.rope_theta)
            lr = 1e-3
        else:
            head = Medusa(cfg.hidden_size, 4, readout)
            lr = 1e-3
        began = time.perf_counter()
        fit(head, data, epochs=args.epochs, lr=lr, log=log)
        seconds = time.perf_counter() - began
        head.eval()
        figures = {"parameters": parameters(head), "readout": readout.weight.numel(), "train_s": round(seconds)}
        for gamma in (1, 2, 3, 4):
            a = acceptance(head, runs, gamma)
            figures[f"gamma_{gamma}"] = {"alpha": [round(x, 3) for x in a.alphas()],
                                         "tokens_per_pass": round(a.tokens_per_pass(), 3)}
        report["designs"][name] = figures
        log(json.dumps({name: figures}))
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
