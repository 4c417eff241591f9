"""Acceptance of a draft, measured offline: drafted rounds over the target's own greedy answers.

A round starts where the text is verified up to token p (the target's features are known up to p - 1 from its
passes; token p is the target's own, the last pass's bonus). The draft proposes ``gamma`` tokens for p + 1 ...:
a stateless windowed draft re-runs over the last <= W rows (row r: feature r - 1, token r), appending its own
predicted feature and token after each step. The longest prefix that matches the target's greedy text is
accepted, and the target's next token comes with it, so the next round starts at p + accepted + 1. This is the
drafted loop of ``py/onepass/drafted.py``, with the target's passes read from its greedy run (verification
reproduces them exactly: position independence).

A draft here is any ``step(features [n, d], tokens [n]) -> (features [n, d], argmax [n])``: the trained module
(``module_step``) or the shipped file (``export.OnnxDraft``), so what is measured is what ships.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .heads import Eagle

PROMPTS = Path(__file__).parent.parent / "benchmarks" / "draft_prompts.json"


@dataclass
class Acceptance:
    gamma: int
    rounds: int = 0
    tokens: int = 0  # tokens written, the target's own included (one per round)
    tried: list[int] = field(default_factory=list)  # per draft position: how often it was reached
    right: list[int] = field(default_factory=list)  # ... and accepted

    def __post_init__(self):
        self.tried, self.right = [0] * self.gamma, [0] * self.gamma

    def add(self, draft: list[int], truth: list[int]) -> int:
        accepted = 0
        for j, (d, t) in enumerate(zip(draft, truth)):
            self.tried[j] += 1
            if d != t:
                break
            self.right[j] += 1
            accepted += 1
        self.rounds += 1
        self.tokens += accepted + 1
        return accepted

    def alphas(self) -> list[float]:
        return [r / t if t else 0.0 for r, t in zip(self.right, self.tried)]

    def alpha(self) -> float:
        """Accepted draft tokens over drafted ones reached (the mean α over positions, weighted by use)."""
        return sum(self.right) / max(1, sum(self.tried))

    def tokens_per_pass(self) -> float:
        return self.tokens / self.rounds

    def summary(self) -> dict:
        return {"alpha": [round(a, 3) for a in self.alphas()], "mean_alpha": round(self.alpha(), 3),
                "tokens_per_pass": round(self.tokens_per_pass(), 3)}


def module_step(model: Eagle):
    @torch.no_grad()
    def step(features: np.ndarray, tokens: np.ndarray):
        out = model(torch.from_numpy(features.astype(np.float32))[None], torch.from_numpy(tokens)[None])
        return out[0].numpy(), model.readout.token(model.readout(out[0])).numpy()
    return step


def window_draft(step, window: int, hidden: np.ndarray, ids: np.ndarray, p: int, gamma: int) -> list[int]:
    """Tokens for p + 1 .. p + gamma from the last <= ``window`` rows, the draft's own fed back after each step."""
    first = max(1, p - window + 1)
    feats = hidden[first - 1:p].astype(np.float32)  # features at first - 1 .. p - 1
    tokens = ids[first:p + 1].astype(np.int64)  # tokens first .. p
    draft = []
    for _ in range(gamma):
        out, argmax = step(feats[-window:], tokens[-window:])
        draft.append(int(argmax[-1]))
        feats = np.concatenate([feats, out[-1:]])
        tokens = np.append(tokens, argmax[-1])
    return draft


def acceptance(propose, runs: list[tuple[np.ndarray, np.ndarray, int]], gamma: int) -> Acceptance:
    """``propose(hidden, ids, p, gamma) -> draft``; runs: (ids of prompt + greedy answer, the target's features over
    them, the prompt's length)."""
    result = Acceptance(gamma)
    for ids, hidden, prompt in runs:
        p = prompt  # the target's pass over the prompt gave token p; the first round drafts after it
        while p < len(ids) - 1:
            truth = ids[p + 1:p + 1 + gamma].tolist()
            p += result.add(propose(hidden, ids, p, gamma)[:len(truth)], truth) + 1
    return result


def windowed(step, window: int):
    return lambda hidden, ids, p, gamma: window_draft(step, window, hidden, ids, p, gamma)


def held_out_runs(target, tokenizer, max_new: int = 64) -> list[tuple[np.ndarray, np.ndarray, int]]:
    """The target's greedy answers to the benchmark's prompts, one at a time (exactly the drafted loop's text)."""
    from onepass.examples import chat

    from .data import encode

    runs = []
    for prompt in json.loads(PROMPTS.read_text()):
        ids = encode(tokenizer, chat(prompt))
        text, _, hidden = target.greedy([ids], max_new + 1)[0]
        runs.append((np.asarray(text, np.int64), hidden.astype(np.float16), len(ids)))
    return runs


def report(propose, runs, gammas=range(1, 7)) -> dict:
    """α per draft position and tokens per pass for each γ."""
    return {str(g): acceptance(propose, runs, g).summary() for g in gammas}
