"""Fitting a draft design to the self-distillation data (``data.Sequences``), deterministically from a seed."""

import random

import torch
from torch.nn import functional as F

from .data import Sequences
from .heads import Eagle, Medusa

NOISE = 0.2  # EAGLE's uniform noise on the input features, as a fraction of their typical size


def _batches(data: Sequences, batch: int, rng: random.Random):
    order = list(range(len(data)))
    rng.shuffle(order)
    for i in range(0, len(order), batch):
        yield order[i:i + batch]


def _pad(rows: list[torch.Tensor], value=0) -> torch.Tensor:
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=value)


def eagle_loss(model: Eagle, data: Sequences, items: list[int], noise: float, generator: torch.Generator):
    """Regression to the target's next feature plus cross-entropy on its next token, every position at once."""
    feats = _pad([data.hidden[i][:-1].float() for i in items])
    tokens = _pad([data.ids[i][1:] for i in items])
    wanted = _pad([data.hidden[i][1:].float() for i in items])
    labels = _pad([model.readout.index[data.argmax[i][1:]] for i in items], value=-1)
    scale = feats.abs().mean()
    feats = feats + (torch.rand(feats.shape, generator=generator) * 2 - 1) * noise * scale
    positions = torch.arange(1, feats.shape[1] + 1)
    out = model(feats, tokens, positions)
    live = labels >= 0
    regression = F.smooth_l1_loss(out[live], wanted[live])
    classes = F.cross_entropy(model.readout(out[live]), labels[live])
    return regression + 0.1 * classes, classes


def medusa_loss(model: Medusa, data: Sequences, items: list[int]):
    """Head j on the feature at t - 1 learns the target's choice of token t + j."""
    feats = _pad([data.hidden[i].float() for i in items])
    labels = _pad([model.readout.index[data.argmax[i]] for i in items], value=-1)
    total = 0
    for j, logits in enumerate(model(feats), start=1):
        # The feature at t - 1 sits at index t - 1; token t + j is the target's choice at index t + j - 1.
        target = labels[:, j:]
        live = target >= 0
        total = total + F.cross_entropy(logits[:, :-j][live], target[live])
    return total / len(model.blocks), total


def fit(model, data: Sequences, *, epochs: int, lr: float, batch: int = 8, seed: int = 0, log=print):
    torch.manual_seed(seed)
    rng, generator = random.Random(seed), torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=0.0)
    steps = epochs * ((len(data) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=lr, total_steps=steps, pct_start=0.1)
    step = 0
    for epoch in range(epochs):
        for items in _batches(data, batch, rng):
            if isinstance(model, Eagle):
                loss, ce = eagle_loss(model, data, items, NOISE, generator)
            else:
                loss, ce = medusa_loss(model, data, items)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            if step % 20 == 0 or step == steps:
                log(f"epoch {epoch} step {step}/{steps} loss {loss.item():.3f} ce {ce.item():.3f}")
    return model
