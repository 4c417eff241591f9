"""The draft designs and recipes measured and not shipped, beside the shipped ones (``draft/heads.py``, ``train.py``).

Kept here so that ``benchmarks/draft_designs.py`` can measure them again on any data, while editing them never
touches the shipped trainer (benchmarks/FINDINGS.md, "More answers, bfloat16, and the designs again", "The prompts'
rows"):

- ``WindowEagle``: EAGLE's decoder layer with grouped-query attention over a WINDOW of the last W rows (rotary
  positions numbered from 0 in the window, so a window run alone gives the same numbers as inside a longer text);
  at W = 16 it drafted no better than one row alone and cost 2.5 times more per pass natively.
- ``Medusa``: k residual heads on the target's feature at t - 1 (Medusa-1, Cai et al., 2024); head j guesses token
  t + j from the target's pass alone.
- ``soft_loss``: cross-entropy against the target's whole distribution over the readout (EAGLE's), not its argmax.
- ``answer_chunks``: training on the answers' rows only, from the prompt's last row.
"""

import functools

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from draft.data import Sequences
from draft.heads import Eagle, Readout, rms_norm
from draft.train import Recipe, eagle_loss


def rope(x: torch.Tensor, positions: torch.Tensor, theta: float) -> torch.Tensor:
    """Rotary position embedding over the last dimension (halves rotated, as Qwen2 does). x: [..., T, head_dim]."""
    half = x.shape[-1] // 2
    freqs = theta ** (-torch.arange(half, dtype=torch.float32) / half)
    angles = positions.float()[:, None] * freqs[None, :]
    cos, sin = torch.cat([angles.cos()] * 2, -1), torch.cat([angles.sin()] * 2, -1)
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


def window_mask(rows: int, window: int) -> torch.Tensor:
    """[rows, rows] bool: row i sees rows i - window + 1 .. i."""
    i = torch.arange(rows)
    distance = i[:, None] - i[None, :]
    return (distance >= 0) & (distance < window)


class WindowLayer(nn.Module):
    """A Qwen2-shaped decoder layer: grouped-query attention with RoPE over a window, then a SwiGLU MLP."""

    def __init__(self, d: int, heads: int, kv_heads: int, mlp: int, window: int, theta: float = 10_000.0):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.window, self.theta = window, theta
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, kv_heads * self.head_dim)
        self.v = nn.Linear(d, kv_heads * self.head_dim)
        self.o = nn.Linear(d, d, bias=False)
        self.norm1 = nn.Parameter(torch.ones(d))
        self.gate, self.up = nn.Linear(d, mlp, bias=False), nn.Linear(d, mlp, bias=False)
        self.down = nn.Linear(mlp, d, bias=False)
        self.norm2 = nn.Parameter(torch.ones(d))

    def keys(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Queries, keys and values of rows x [B, T, d], rotated by their position 0 .. T - 1."""
        b, t, _ = x.shape
        h = rms_norm(x, self.norm1)
        positions = torch.arange(t)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        repeat = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeat, 1), v.repeat_interleave(repeat, 1)
        return rope(q, positions, self.theta), rope(k, positions, self.theta), v

    def attend(self, x, q, k, v, mask: torch.Tensor) -> torch.Tensor:
        """x plus attention of queries q over keys k, v where ``mask`` [T, keys] allows, then the MLP."""
        b, t, d = x.shape
        scores = (q @ k.transpose(-1, -2)) / self.head_dim ** 0.5
        scores = scores.masked_fill(~mask, float("-inf"))
        x = x + self.o((scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d))
        h = rms_norm(x, self.norm2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attend(x, *self.keys(x), window_mask(x.shape[1], self.window))


class WindowEagle(Eagle):
    """``heads.Eagle`` whose layer attends over the last ``window`` rows."""

    def __init__(self, readout: Readout, heads: int, kv_heads: int, mlp: int, window: int):
        super().__init__(readout, mlp)
        self.window = window
        self.layer = WindowLayer(readout.table.shape[1], heads, kv_heads, mlp, window)

    def unrolled(self, features: torch.Tensor, tokens: torch.Tensor, steps: int) -> list[torch.Tensor]:
        """Every row as the s-th step of a draft round: at step s, row t is fed the draft's own feature from step
        s - 1 at row t - 1, and sees row t - u (u < s) as fed at step s - u, older rows as the target's. With one
        layer a row's keys depend on its own input only, so each step's keys are computed once."""
        t = features.shape[1]
        x = self.inputs(features, tokens)
        q, k, v = self.layer.keys(x)
        ks, vs = [k], [v]
        distance = torch.arange(t)[:, None] - torch.arange(t)[None, :]
        outs = [self.layer.attend(x, q, k, v, window_mask(t, self.window))]
        for s in range(2, steps + 1):
            shifted = torch.cat([features[:, :1], outs[-1][:, :-1]], 1)
            x = self.inputs(shifted, tokens)
            q, k, v = self.layer.keys(x)
            ks.append(k)
            vs.append(v)
            # Keys of step u serve the rows at distance s - u; step 1's serve every distance from s - 1 on.
            masks = [(distance >= s - 1) & (distance < self.window)]
            masks += [distance == s - u for u in range(2, s + 1)]
            outs.append(self.layer.attend(x, q, torch.cat(ks, 2), torch.cat(vs, 2), torch.cat(masks, 1)))
        return outs


class Medusa(nn.Module):
    """feature at t - 1 -> logits for tokens t + 1 .. t + k, one residual block per head, one shared readout."""

    def __init__(self, readout: Readout, k: int):
        super().__init__()
        d = readout.table.shape[1]
        self.blocks = nn.ModuleList(nn.Linear(d, d) for _ in range(k))
        for block in self.blocks:  # each head starts as the target's own next-token head
            nn.init.zeros_(block.weight)
            nn.init.zeros_(block.bias)
        self.readout = readout

    def forward(self, features: torch.Tensor) -> list[torch.Tensor]:
        return [self.readout(features + F.silu(block(features))) for block in self.blocks]


def medusa_loss(model: Medusa, data: Sequences, items, recipe: Recipe, generator=None):
    """Head j on the feature at t - 1 learns the target's choice of token t + j (its argmax at t + j - 1)."""
    feats, labels = [], []
    for i, start in items:
        end = min(start + recipe.length, len(data.ids[i]))
        feats.append(torch.from_numpy(data.hidden[i][start:end].astype(np.float32)))
        labels.append(model.readout.index[torch.from_numpy(data.argmax[i][start:end])])
    feats = nn.utils.rnn.pad_sequence(feats, batch_first=True)
    labels = nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=-1)
    total = 0.0
    for j, logits in enumerate(model(feats), start=1):
        target = labels[:, j:]
        live = target >= 0
        total = total + F.cross_entropy(logits[:, :-j][live], target[live])
    return total / len(model.blocks), total


@torch.no_grad()
def medusa_draft(model: Medusa, hidden: np.ndarray, p: int, gamma: int) -> list[int]:
    logits = model(torch.from_numpy(hidden[p - 1].astype(np.float32))[None])
    return [int(model.readout.token(head)[0]) for head in logits[:gamma]]


def soft_labels(model: Eagle, out: torch.Tensor, wanted: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """EAGLE's classification target: the target's own distribution (its readout of its feature), not its argmax."""
    logits = model.readout(out)
    with torch.no_grad():
        p = model.readout(wanted).float().softmax(-1)
    return -(p * logits.float().log_softmax(-1)).sum(-1).mean()


# The shipped loss with soft labels.
soft_loss = functools.partial(eagle_loss, classification=soft_labels)


def answer_chunks(data: Sequences, length: int) -> list[tuple[int, int]]:
    """``train.chunks`` from each text's prompt's last row on (its feature and the answer's first token draft the
    answer's second: the first question a drafted round asks), so the prompts' rows are not trained."""
    return [(i, start) for i, (ids, first) in enumerate(zip(data.ids, data.starts))
            for start in range(max(0, first - 1), len(ids) - 1, length)]
