"""Acceptance of a draft, measured offline: drafted rounds over the target's own greedy answers.

A round starts where the text is verified up to position p - 1 (the target's features there are known from
its pass) and the target's own token at p is known. The draft proposes ``gamma`` tokens for p + 1 ...; the
longest prefix that matches the target's greedy text is accepted, and the target's next token comes with
it, so the next round starts at p + accepted + 1. This is the drafted loop of ``py/onepass/drafted.py``,
with the target's passes read from its teacher-forced run (which verification reproduces exactly).
"""

from dataclasses import dataclass, field

import torch

from .heads import Eagle, Medusa


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

    def tokens_per_pass(self) -> float:
        return self.tokens / self.rounds


@torch.no_grad()
def eagle_draft(model: Eagle, hidden: torch.Tensor, ids: torch.Tensor, p: int, gamma: int) -> list[int]:
    """Tokens for p + 1 .. p + gamma: the layer over the verified context, then its own features fed back."""
    feats = hidden[:p].float()[None]  # the target's features at 0 .. p - 1
    tokens = ids[1:p + 1][None]  # tokens 1 .. p
    draft = []
    for step in range(gamma):
        positions = torch.arange(1, feats.shape[1] + 1)
        out = model(feats, tokens, positions)
        token = model.readout.token(model.readout(out[:, -1]))
        draft.append(int(token))
        feats = torch.cat([feats, out[:, -1:]], 1)
        tokens = torch.cat([tokens, token.view(1, 1)], 1)
    return draft


@torch.no_grad()
def medusa_draft(model: Medusa, hidden: torch.Tensor, p: int, gamma: int) -> list[int]:
    logits = model(hidden[p - 1].float()[None])
    return [int(model.readout.token(head)) for head in logits[:gamma]]


def acceptance(model, runs: list[tuple[torch.Tensor, torch.Tensor, int]], gamma: int) -> Acceptance:
    """runs: (ids of prompt + greedy answer, the target's features over them, the prompt's length)."""
    result = Acceptance(gamma)
    for ids, hidden, prompt in runs:
        p = prompt  # the target's pass over the prompt gave token p; the first round drafts after it
        while p < len(ids) - 1:
            if isinstance(model, Eagle):
                draft = eagle_draft(model, hidden, ids, p, gamma)
            else:
                draft = medusa_draft(model, hidden, p, gamma)
            truth = ids[p + 1:p + 1 + gamma].tolist()
            p += result.add(draft[:len(truth)], truth) + 1
    return result
