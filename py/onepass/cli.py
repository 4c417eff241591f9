"""``python -m onepass``: run the lesson's algorithms on an export natively, from the command line.

    run          generate from a text (greedy, prompt lookup, a guess or a draft model) and print the trace
    exactness    check drafted == greedy over a prompt set, for every proposer and cache mode
    examples     run step 5's worked examples and print their tokens per pass

``run`` is the pages' generation (``generation.py``), natively: the same
checks and the same run. Bad input (an empty text, a folder that is not an
export, a request over the pages' limits) ends with a message and exit code
2; ``exactness`` and ``examples`` exit with 1 if any drafted text differs
from greedy's.
"""

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from .contract import DRAFTING, Generate, GenerateResult, Refusal, RunRecord
from .drafted import drafted
from .examples import EXAMPLES, chat, recorded
from .exactness import ORACLE_PROPOSERS, compare, summarize
from .generation import generate
from .greedy import greedy
from .proposers import Context, proposer

USAGE_ERROR = 2
MAX_NEW = 64  # run's and exactness's tokens per text: longer than a panel's run (contract.Generate.max_new)


class InputError(Exception):
    """Input the user can fix; reported as one line, without a traceback."""


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.command(args)
    except (InputError, Refusal) as error:
        print(f"onepass: error: {error}", file=sys.stderr)
        return USAGE_ERROR


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m onepass",
                                  description="Run the lesson's algorithms on a model export, natively.")
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="generate from a text and print the trace")
    add_model_arguments(run)
    run.add_argument("--text", required=True, help="the prompt (chat markers such as <|im_start|> are special tokens)")
    run.add_argument("--mode", choices=("greedy", "lookup", "guess", *DRAFTING), default="lookup",
                     help="lookup+draft: prompt lookup's copy where the text repeats, else the model's earlier answers' "
                          "(when the draft has them), else the draft model's")
    run.add_argument("--guess", help="with --mode guess: the continuation you expect")
    run.add_argument("--adaptive", action="store_true", help="with a draft mode: each round weighed, as step 6's "
                     "\"Only where it pays\" (the draft proposes nothing where it is unsure, and is asked only while it pays)")
    add_chat_argument(run)
    add_draft_arguments(run)
    run.add_argument("--max-new", type=int, default=MAX_NEW, help=f"most tokens to generate (default {MAX_NEW})")
    run.add_argument("--no-kv-cache", action="store_true", help="re-read the whole text in every pass")
    run.add_argument("--json", action="store_true", help="print the trace as JSON")
    run.set_defaults(command=run_command)

    exactness = commands.add_parser("exactness", help="check drafted == greedy over a prompt set")
    add_model_arguments(exactness)
    exactness.add_argument("--prompts", required=True, type=Path, help="a JSON array of prompt strings")
    exactness.add_argument("--max-new", type=int, default=MAX_NEW, help=f"tokens per prompt (default {MAX_NEW})")
    add_chat_argument(exactness)
    exactness.add_argument("--proposers", help=f"comma-separated, from {','.join(ORACLE_PROPOSERS + DRAFTING)} "
                                               "(default: all; draft only with --draft)")
    add_draft_arguments(exactness)
    exactness.add_argument("--cache", default="on",
                           help="KV cache modes: on (default), off, or on,off (without the cache a pass re-reads "
                                "the whole text, which is slow on the real model)")
    exactness.add_argument("--every", type=int, default=1, help="use every N-th prompt only (default 1: all)")
    exactness.add_argument("--seed", type=int, default=0, help="seed of the random proposers")
    exactness.add_argument("--json", action="store_true", help="print the summary as JSON")
    exactness.set_defaults(command=exactness_command)

    examples = commands.add_parser("examples", help="run step 5's worked examples with prompt lookup")
    add_model_arguments(examples)
    examples.add_argument("--json", action="store_true")
    examples.add_argument("--record", type=Path, metavar="FILE",
                          help="also write every pass of the runs, with timings, to FILE (as tests/data/runs-*.json)")
    examples.set_defaults(command=examples_command)
    return top


def add_model_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--model", required=True, type=Path, help="an export folder (holding manifest.json)")
    command.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads (default 2)")


def add_chat_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument("--chat", action="store_true",
                         help="send each text as one user turn in the model's chat format (as step 5's examples and step "
                              "6's \"As a chat message\"): the model answers it instead of continuing it")


def add_draft_arguments(command: argparse.ArgumentParser) -> None:
    command.add_argument("--draft", type=Path, help="a draft folder (holding draft.json; python -m draft builds one)")
    command.add_argument("--gamma", type=int, help="tokens the draft model proposes per round (default: step 6's, "
                                                    f"{Generate.gamma})")


def open_draft(args, model):
    """The native draft model and its draft length, when ``--draft`` names one built for ``model``."""
    from .backends.native import DraftUnavailable, NativeDraft

    if args.draft is None:
        raise InputError("drafting with a model needs --draft DIR, a draft built with: python -m draft --target "
                         f"{args.model}")
    try:
        draft = NativeDraft(args.draft, threads=args.threads, target=model.manifest)
    except DraftUnavailable as error:
        raise InputError(str(error)) from None
    gamma = positive(args.gamma, "--gamma") if args.gamma is not None else Generate.gamma
    return draft, gamma


def open_model(args):
    """The native model and tokenizer, imported here so that ``--help`` and input errors need no onnxruntime."""
    from .backends.native import NativeModel
    from .backends.tokenizer import NativeTokenizer

    if not (args.model / "manifest.json").is_file():
        raise InputError(f"{args.model} is not a model export (no manifest.json); build one with: "
                         "python -m model_export --source default")
    return NativeModel(args.model, threads=args.threads), NativeTokenizer(args.model)


def positive(value: int, name: str) -> int:
    if value < 1:
        raise InputError(f"{name} must be at least 1, got {value}")
    return value


def run_command(args) -> int:
    if not args.text.strip():
        raise InputError("--text is empty: give the model something to continue")
    if args.mode == "guess" and not args.guess:
        raise InputError("--mode guess needs --guess TEXT, the continuation you expect")
    max_new = positive(args.max_new, "--max-new")
    model, tokenizer = open_model(args)
    gamma = Generate.gamma
    if args.mode in DRAFTING:
        model.draft, gamma = open_draft(args, model)  # where the generation finds the site's draft (draft_of)
    asked = Generate(text=args.text, mode=args.mode, kv_cache=not args.no_kv_cache, max_new=max_new,
                     guess=args.guess or "", gamma=gamma, chat=args.chat, adaptive=args.adaptive)
    result = asyncio.run(generate(model, tokenizer, asked, lambda event: None))
    drafting = result.get("draft")
    if args.json:
        run = {key: result[key] for key in RunRecord.__annotations__}
        shown = {key: drafting[key] for key in ("gamma", "passes", "seconds", "copies", "from_answers", "acceptance",
                                                "adaptive", "rounds")} \
            if drafting else None
        print(json.dumps({"model": model.facts.name, "text": result["prompt_text"], "generated": result["text"],
                          "run": run, **({"draft": shown} if drafting else {})}, ensure_ascii=False, indent=1))
    else:
        print_run(result, model.facts.name, tokenizer)
        if drafting:
            alphas = ", ".join(f"{found['alpha']:.2f}" for found in drafting["acceptance"])
            copies = (f", {drafting['copies']} rounds copied ({drafting['from_answers']} of them from the model's earlier "
                      "answers, the rest from the text)") if args.mode != "draft" else ""
            print(f"draft model: gamma {gamma}, {drafting['passes']} small passes in {drafting['seconds']:.2f} s{copies}; "
                  f"acceptance per draft position: {alphas}")
    return 0


def print_run(run: GenerateResult, model_name: str, tokenizer) -> None:
    print(f"model: {model_name}   mode: {run['mode']}   KV cache: {'on' if run['kv_cache'] else 'off'}")
    print(f"{'pass':>4}  {'fed':>4}  {'draft':>5}  {'kept':>4}  {'ms':>7}  added")
    for number, row in enumerate(run["passes"], 1):
        added = repr(tokenizer.decode(row["added"])) + ("  (bonus)" if row["bonus"] else "")
        print(f"{number:>4}  {len(row['fed']):>4}  {len(row['draft']):>5}  {row['accepted']:>4}  "
              f"{row['seconds'] * 1000:>7.1f}  {added}")
    totals = run["totals"]
    stop = "end-of-text" if run["stop"] == "eos" else "--max-new"
    print(f"\nprompt:    {tokenizer.decode(run['prompt'])!r}\ngenerated: {run['text']!r}\n")
    print(f"{totals['passes']} passes, {totals['tokens']} tokens, {totals['tokens_per_pass']:.2f} tokens per pass, "
          f"{totals['seconds']:.2f} s in passes; stopped at {stop}")


def read_prompts(path: Path) -> list[str]:
    try:
        prompts = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise InputError(f"cannot read prompts from {path}: {error}") from None
    if not isinstance(prompts, list) or not prompts or not all(isinstance(p, str) and p.strip() for p in prompts):
        raise InputError(f"{path} must hold a non-empty JSON array of non-empty strings")
    return prompts


def exactness_modes(proposers: str | None, cache: str, draft: bool = False) -> list[tuple[str, bool]]:
    known = ORACLE_PROPOSERS + DRAFTING
    if proposers is None:
        proposers = ",".join(ORACLE_PROPOSERS + (DRAFTING if draft else ()))
    names = [name for name in proposers.split(",") if name]
    unknown = sorted(set(names) - set(known))
    if unknown or not names:
        raise InputError(f"unknown proposers {unknown}; choose from {','.join(known)}")
    switches = {"on": True, "off": False}
    if not cache or any(value not in switches for value in cache.split(",")):
        raise InputError("--cache takes on, off or on,off")
    cache_modes = [switches[value] for value in cache.split(",")]
    # Greedy with the cache on is the reference; with it off, it is checked like any other mode.
    return [("greedy", False)] * (False in cache_modes) + [(name, kv) for name in names for kv in cache_modes]


def exactness_command(args) -> int:
    # Failures are reported by the prompt's index in the whole file, also when only every N-th prompt runs.
    prompts = [(index, chat(text) if args.chat else text)
               for index, text in enumerate(read_prompts(args.prompts))][::positive(args.every, "--every")]
    modes = exactness_modes(args.proposers, args.cache, draft=args.draft is not None)
    max_new = positive(args.max_new, "--max-new")
    model, tokenizer = open_model(args)
    draft, gamma = open_draft(args, model) if any(name in DRAFTING for name, _ in modes) else (None, 0)
    warm_up(model, tokenizer.encode(prompts[0][1]), draft, gamma)
    outcomes, began = [], time.perf_counter()
    for done, (index, text) in enumerate(prompts, 1):
        outcomes += asyncio.run(compare(model, index, tokenizer.encode(text), max_new, modes, seed=args.seed,
                                        draft=draft, gamma=gamma))
        print(f"\r{done}/{len(prompts)} prompts, {time.perf_counter() - began:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    summary = summarize(outcomes)
    if args.json:
        print(json.dumps({"model": model.facts.name, "prompts": len(prompts), "max_new": max_new,
                          "threads": args.threads, **({"gamma": gamma} if draft else {}), "modes": summary}, indent=1))
    else:
        print(f"model: {model.facts.name}; {len(prompts)} prompts x up to {max_new} new tokens; "
              "reference: greedy with the KV cache")
        print(f"{'mode':<12} {'cache':<5} {'identical':>15} {'tokens/pass':>11} {'seconds':>8} {'speed-up':>8}  alpha")
        for row in summary:
            alphas = " ".join(f"{found['alpha']:.2f}" for found in row.get("acceptance", []))
            print(f"{row['mode']:<12} {'on' if row['kv_cache'] else 'off':<5} "
                  f"{row['identical']:>4}/{row['prompts']:<4} {row['share']:>6.1%} {row['tokens_per_pass']:>11.2f} "
                  f"{row['seconds']:>8.1f} {row['speedup']:>7.2f}x  {alphas}"
                  + (f"  (c = {row['c']:.3f})" if row.get("c") is not None else ""))
            for failure in row["failures"]:
                print(f"    prompt {failure['prompt']}: first difference at generated token "
                      f"{failure['first_difference']}")
    return 0 if all(row["share"] == 1.0 for row in summary) else 1


def warm_up(model, prompt: list[int], draft=None, gamma: int = Generate.gamma) -> None:
    """A few passes before the clocks start (the draft model's at the run's draft length), so that no mode pays for
    onnxruntime's first runs."""
    asyncio.run(greedy(model, prompt, 4))
    if draft is not None:
        asyncio.run(drafted(model, prompt, proposer("draft", Context(prompt=prompt, vocab_size=model.facts.vocab_size,
                                                                      draft=draft, gamma=gamma)), 4))


def examples_command(args) -> int:
    model, tokenizer = open_model(args)
    results, runs = [], {}
    for example in EXAMPLES:
        runs[example.key] = asyncio.run(recorded(model, tokenizer.encode(example.prompt), example))
        lookup, reference = runs[example.key]["lookup"], runs[example.key]["greedy"]
        results.append({"example": example.key, "identical": lookup["tokens"] == reference["tokens"],
                        "greedy_passes": len(reference["passes"]), "text": tokenizer.decode(lookup["tokens"]),
                        **lookup["totals"]})
    if args.record:
        args.record.write_text(json.dumps({"model": model.facts.name, "threads": args.threads,
                                           "recorded": time.strftime("%Y-%m-%d"), "runs": runs}) + "\n")
    if args.json:
        print(json.dumps({"model": model.facts.name, "examples": results}, ensure_ascii=False, indent=1))
    else:
        for result in results:
            print(f"{result['example']:<11} {result['tokens']:>3} tokens in {result['passes']:>3} passes "
                  f"(greedy: {result['greedy_passes']}) = {result['tokens_per_pass']:.2f} tokens per pass; "
                  f"identical to greedy: {result['identical']}")
            print(f"            {result['text']!r}")
    return 0 if all(result["identical"] for result in results) else 1
