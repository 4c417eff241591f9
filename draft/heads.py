"""The shipped draft design, over the target's features (its final norm's output), read out over a subset of the
vocabulary.

``Eagle``: EAGLE's draft (Li et al., 2024) reduced to what measured best here: (the target's feature at t - 1, the
embedding of token t) are fused by one linear layer, then one SwiGLU MLP block with a residual predicts the feature at
t, whose readout is token t + 1. A row reads only itself, so a draft pass is stateless: each draft step feeds the
last row, the speculative ones carrying the draft's own predicted feature; there is no KV cache to roll back. The
designs measured and not shipped (attention over a window of rows, Medusa's heads) are ``benchmarks/draft_variants.py``.

The readout is the target's own word table, restricted to the tokens the target writes (``Readout``) and frozen:
the draft learns to produce features the target's own output layer reads correctly. The model's word table is
tied (one table for input and output), so the same rows embed the input tokens; a token outside the subset is
embedded as one learned vector. A token outside the subset is one the draft never proposes; verification keeps
the text exact whatever the draft proposes.
"""

import torch
from torch import nn
from torch.nn import functional as F


class Readout(nn.Module):
    """Logits over ``ids`` only, through the target's own rows for them (frozen)."""

    def __init__(self, table: torch.Tensor, ids: torch.Tensor, vocab_size: int):
        super().__init__()
        self.register_buffer("table", table.clone().float())  # [S, d]: the target's rows for ``ids``
        self.register_buffer("ids", ids.clone().long())
        # Where each vocabulary id sits in the subset (-1: not in it), for labels and input tokens.
        index = torch.full((vocab_size,), -1, dtype=torch.long)
        index[ids] = torch.arange(len(ids))
        self.register_buffer("index", index)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.table.T

    def token(self, logits: torch.Tensor) -> torch.Tensor:
        return self.ids[logits.argmax(-1)]


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


class Block(nn.Module):
    """A Qwen2-shaped decoder layer's MLP half: RMS norm, SwiGLU, residual."""

    def __init__(self, d: int, mlp: int):
        super().__init__()
        self.gate, self.up = nn.Linear(d, mlp, bias=False), nn.Linear(d, mlp, bias=False)
        self.down = nn.Linear(mlp, d, bias=False)
        self.norm2 = nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = rms_norm(x, self.norm2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Eagle(nn.Module):
    """(feature at t - 1, token t) -> feature at t, and through the readout the token after it."""

    window = 1  # rows one draft pass reads (draft.json's "window"; the runtime feeds at most this many)

    def __init__(self, readout: Readout, mlp: int):
        super().__init__()
        d = readout.table.shape[1]
        self.readout = readout
        self.unknown = nn.Parameter(torch.zeros(d))  # the embedding of every token outside the readout's subset
        self.fc = nn.Linear(2 * d, d)
        self.layer = Block(d, mlp)

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        where = self.readout.index[tokens]
        rows = self.readout.table[where.clamp(min=0)]
        return torch.where((where >= 0)[..., None], rows, self.unknown)

    def inputs(self, features: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.cat([features, self.embed(tokens)], -1))

    def forward(self, features: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        """features [B, T, d] (at t - 1), tokens [B, T] (at t) -> predicted features [B, T, d] (at t)."""
        return self.layer(self.inputs(features, tokens))

    def unrolled(self, features: torch.Tensor, tokens: torch.Tensor, steps: int) -> list[torch.Tensor]:
        """Every row as the s-th step of a draft round, s = 1 .. steps (training-time test, as in HASS/EAGLE-3):
        at step s, row t is fed the draft's own feature from step s - 1 at row t - 1."""
        outs = [self(features, tokens)]
        for _ in range(steps - 1):
            shifted = torch.cat([features[:, :1], outs[-1][:, :-1]], 1)
            outs.append(self(shifted, tokens))
        return outs


def parameters(module: nn.Module) -> int:
    """Trained parameters plus the readout's table (shipped, though frozen); the index map is not counted."""
    return sum(p.numel() for p in module.parameters()) + module.readout.table.numel()
