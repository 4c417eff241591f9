"""Two draft designs over the target's final hidden states, read out over a subset of the vocabulary.

- ``Eagle``: one decoder layer (EAGLE, Li et al. 2024). At position t it takes the target's feature at t - 1
  and the embedding of token t, and predicts the feature at t; the readout turns that into token t + 1. It
  drafts autoregressively, feeding its own predicted feature and token back, one small pass per token.
- ``Medusa``: k residual heads on the target's feature at t - 1 (Medusa-1, Cai et al. 2024); head j predicts
  token t + j, all from the pass the target has just run, with no pass of their own.

Both read out through ``Readout``: the rows of the target's output table for the tokens the target actually
writes (the most frequent of its predictions in the training data), so a draft's last layer costs a fraction
of the target's. Verification keeps the text exact whatever the draft proposes; a token outside the subset is
one the draft can never propose.
"""

import torch
from torch import nn
from torch.nn import functional as F


class Readout(nn.Module):
    """Logits over ``ids`` only, initialised from the target's output table rows for them."""

    def __init__(self, table: torch.Tensor, ids: torch.Tensor):
        super().__init__()
        self.weight = nn.Parameter(table[ids].clone().float())
        self.register_buffer("ids", ids.clone())
        # Where each vocabulary id sits in the subset (-1: not in it), for the labels.
        index = torch.full((table.shape[0],), -1, dtype=torch.long)
        index[ids] = torch.arange(len(ids))
        self.register_buffer("index", index)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h @ self.weight.T

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


class DecoderLayer(nn.Module):
    """A Qwen2-shaped decoder layer: grouped-query attention with RoPE, then a SwiGLU MLP, each pre-normed."""

    def __init__(self, d: int, heads: int, kv_heads: int, mlp: int, theta: float):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim, self.theta = heads, kv_heads, d // heads, theta
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, kv_heads * self.head_dim)
        self.v = nn.Linear(d, kv_heads * self.head_dim)
        self.o = nn.Linear(d, d, bias=False)
        self.gate, self.up = nn.Linear(d, mlp, bias=False), nn.Linear(d, mlp, bias=False)
        self.down = nn.Linear(mlp, d, bias=False)
        self.norm1, self.norm2 = nn.Parameter(torch.ones(d)), nn.Parameter(torch.ones(d))

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = rms_norm(x, self.norm1)
        q = self.q(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = rope(q, positions, self.theta), rope(k, positions, self.theta)
        repeat = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeat, 1), v.repeat_interleave(repeat, 1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(a)
        h = rms_norm(x, self.norm2)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Eagle(nn.Module):
    """feature[t-1], token[t] -> feature[t] (and, through the readout, token[t+1])."""

    def __init__(self, embedding: torch.Tensor, readout: Readout, heads: int, kv_heads: int, mlp: int, theta: float):
        super().__init__()
        d = embedding.shape[1]
        self.register_buffer("embedding", embedding.half(), persistent=False)  # the target's, frozen
        self.fc = nn.Linear(2 * d, d)
        self.layer = DecoderLayer(d, heads, kv_heads, mlp, theta)
        self.readout = readout

    def forward(self, features: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """features [B, T, d] (the target's at t-1), tokens [B, T] (at t) -> predicted features [B, T, d]."""
        x = self.fc(torch.cat([features, self.embedding[tokens].float()], -1))
        return self.layer(x, positions)


class Medusa(nn.Module):
    """feature[t-1] -> logits for tokens t+1 .. t+k, one residual block per head, one shared readout."""

    def __init__(self, d: int, k: int, readout: Readout):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(d, d) for _ in range(k))
        for block in self.blocks:  # each head starts as the target's own next-token head
            nn.init.zeros_(block.weight)
            nn.init.zeros_(block.bias)
        self.readout = readout

    def forward(self, features: torch.Tensor) -> list[torch.Tensor]:
        return [self.readout(features + F.silu(block(features))) for block in self.blocks]


def parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
