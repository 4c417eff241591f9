"""The draft designs, over the target's features (its final norm's output), read out over a subset of the vocabulary.

- ``Eagle``: EAGLE's one decoder layer (Li et al., 2024) over (the target's feature at t - 1, the embedding of
  token t), predicting the feature at t, whose readout is token t + 1. Its attention sees only a WINDOW of the
  last W rows, so a draft pass is stateless: each draft step re-runs the layer over the last <= W (feature,
  token) pairs, the speculative ones carrying the draft's own predicted features; there is no KV cache to
  roll back. Rotary positions make the attention depend on distances only, so a window's rows numbered from
  0 give the same numbers as the same rows inside a longer text (``tests/test_draft_window.py``).
  ``window=1`` is a design of its own: no attention, one MLP per row.
- ``Medusa``: k residual heads on the target's feature at t - 1 (Medusa-1, Cai et al., 2024); head j guesses
  token t + j from the target's pass alone. Kept for comparison (``benchmarks/draft_designs.py``).

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


class DecoderLayer(nn.Module):
    """A Qwen2-shaped decoder layer: grouped-query attention with RoPE over a window, then a SwiGLU MLP."""

    def __init__(self, d: int, heads: int, kv_heads: int, mlp: int, window: int, theta: float = 10_000.0):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.window, self.theta = window, theta
        if window > 1:
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
        if self.window > 1:
            b, t, d = x.shape
            scores = (q @ k.transpose(-1, -2)) / self.head_dim ** 0.5
            scores = scores.masked_fill(~mask, float("-inf"))
            a = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.o(a)
        h = rms_norm(x, self.norm2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.window == 1:
            return self.attend(x, None, None, None, None)
        return self.attend(x, *self.keys(x), window_mask(x.shape[1], self.window))


class Eagle(nn.Module):
    """(feature at t - 1, token t) -> feature at t, and through the readout the token after it."""

    def __init__(self, readout: Readout, heads: int, kv_heads: int, mlp: int, window: int):
        super().__init__()
        d = readout.table.shape[1]
        self.window = window
        self.readout = readout
        self.unknown = nn.Parameter(torch.zeros(d))  # the embedding of every token outside the readout's subset
        self.fc = nn.Linear(2 * d, d)
        self.layer = DecoderLayer(d, heads, kv_heads, mlp, window)

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
        """Every row as the s-th step of a draft round, s = 1 .. steps (training-time test, as in HASS/EAGLE-3).

        At step s, row t is fed the draft's own feature from step s - 1 at row t - 1, and it sees the rows of the
        same round as the draft would have fed them: row t - u (u < s) as fed at step s - u, older rows as the
        target's. With one layer a row's keys depend on its own input only, so each step's keys are computed once.
        """
        t = features.shape[1]
        x = self.inputs(features, tokens)
        if self.window == 1:
            outs = [self.layer(x)]
            for _ in range(steps - 1):
                shifted = torch.cat([features[:, :1], outs[-1][:, :-1]], 1)
                outs.append(self.layer(self.inputs(shifted, tokens)))
            return outs
        q, k, v = self.layer.keys(x)
        ks, vs, xs = [k], [v], [x]
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


def parameters(module: nn.Module) -> int:
    """Trained parameters plus the readout's table (shipped, though frozen); the index map is not counted."""
    return sum(p.numel() for p in module.parameters()) + module.readout.table.numel()
