"""Fitting a draft design to the self-distillation data (``data.Sequences``), deterministically from a seed.

EAGLE's recipe (Li et al., 2024): regression of the predicted feature onto the target's, plus cross-entropy of
its readout against the target's own next token, with uniform noise on the input features so the layer learns
to read features that are a little off, as its own will be. Draft positions 2+ are fed the draft's own
features, so training unrolls ``steps`` draft steps (the training-time test of HASS and EAGLE-3): every row is
trained as the first, the second, ... step of a round, over the window the drafted loop would feed it.

Where the processor multiplies bfloat16 in hardware (AMX or AVX-512 BF16), the passes run under bfloat16 autocast
(the weights and the optimiser stay float32): a training step of 8 x 256 rows takes about half the time on this
machine's processor (benchmarks/FINDINGS.md, "More answers, bfloat16"), which buys data and epochs.
"""

import contextlib
import random
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as F

from .data import Sequences
from .heads import Eagle


@dataclass(frozen=True)
class Recipe:
    epochs: int = 2
    lr: float = 1e-3
    batch: int = 8  # chunks per step
    length: int = 256  # rows per chunk
    steps: int = 2  # draft steps unrolled in training
    noise: float = 0.2  # uniform noise on the input features, as a fraction of their mean magnitude
    ce_weight: float = 0.5
    bfloat16: bool = True  # autocast where the processor has bfloat16 arithmetic (``precision``)


def precision(recipe: Recipe) -> str:
    """The arithmetic ``fit`` trains in on this machine: "bfloat16" where asked for and done in hardware."""
    hardware = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    return "bfloat16" if recipe.bfloat16 and hardware else "float32"


def _autocast(recipe: Recipe):
    if precision(recipe) == "bfloat16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def chunks(data: Sequences, length: int) -> list[tuple[int, int]]:
    """(sequence, first row) of every training chunk: each sequence cut into pieces of at most ``length`` rows. The
    prompts' rows are trained too: a draft never drafts inside a prompt, but without them training took a quarter
    less time and the draft accepted 0.012 less (benchmarks/FINDINGS.md, "The prompts' rows")."""
    return [(i, start) for i, ids in enumerate(data.ids) for start in range(0, len(ids) - 1, length)]


def _pad(rows: list[torch.Tensor], value=0) -> torch.Tensor:
    return torch.nn.utils.rnn.pad_sequence(rows, batch_first=True, padding_value=value)


def eagle_batch(model: Eagle, data: Sequences, items, length: int):
    """Rows t of each chunk: the target's feature at t - 1 and token t in; its feature at t and its choice after t
    (as an index into the readout's subset; -1 outside it or past the chunk's end) out."""
    feats, tokens, wanted, labels = [], [], [], []
    for i, start in items:
        end = min(start + length, len(data.ids[i]) - 1)
        feats.append(torch.from_numpy(data.hidden[i][start:end].astype(np.float32)))
        tokens.append(torch.from_numpy(data.ids[i][start + 1:end + 1]))
        wanted.append(torch.from_numpy(data.hidden[i][start + 1:end + 1].astype(np.float32)))
        labels.append(model.readout.index[torch.from_numpy(data.argmax[i][start + 1:end + 1])])
    return _pad(feats), _pad(tokens), _pad(wanted), _pad(labels, value=-1)


def hard_labels(model: Eagle, out: torch.Tensor, wanted: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """The readout's cross-entropy against the target's own choice (its argmax), for predicted features ``out``."""
    return F.cross_entropy(model.readout(out), labels)


def eagle_loss(model: Eagle, data: Sequences, items, recipe: Recipe, generator: torch.Generator,
               classification=hard_labels):
    """The recipe's loss over the chunks ``items``, and the first draft step's cross-entropy (logged);
    ``classification(model, out, wanted, labels)``: the labels' part (a variant's: benchmarks/draft_variants.py)."""
    feats, tokens, wanted, labels = eagle_batch(model, data, items, recipe.length)
    scale = feats.abs().mean()
    noisy = feats + (torch.rand(feats.shape, generator=generator) * 2 - 1) * recipe.noise * scale
    live = labels >= 0
    total, first_ce = 0.0, None
    for s, out in enumerate(model.unrolled(noisy, tokens, recipe.steps), start=1):
        # Step s at row t drafts the token after t; rows before the (s-1)-th have no round that long.
        rows = live.clone()
        rows[:, :s - 1] = False
        regression = F.smooth_l1_loss(out[rows], wanted[rows])
        ce = classification(model, out[rows], wanted[rows], labels[rows])
        total = total + regression + recipe.ce_weight * ce
        first_ce = ce if first_ce is None else first_ce
    return total / recipe.steps, first_ce


def fit(model, data: Sequences, recipe: Recipe, seed: int = 0, log=print, max_steps: int | None = None,
        loss=eagle_loss, pieces: list[tuple[int, int]] | None = None):
    """Train ``model`` in place (for the recipe's epochs, or its first ``max_steps`` steps) on the chunks ``pieces``
    (default: every row, ``chunks``); returns the losses logged (every 20 steps). ``loss(model, data, items, recipe,
    generator) -> (loss, logged cross-entropy)``: the shipped recipe's, or a variant's (benchmarks/draft_variants.py)."""
    torch.manual_seed(seed)
    rng, generator = random.Random(seed), torch.Generator().manual_seed(seed)
    trained = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trained, lr=recipe.lr, weight_decay=0.0)
    pieces = list(chunks(data, recipe.length) if pieces is None else pieces)
    per_epoch = (len(pieces) + recipe.batch - 1) // recipe.batch
    steps = recipe.epochs * per_epoch
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=recipe.lr, total_steps=steps, pct_start=0.1)
    history, step = [], 0
    model.train()
    for epoch in range(recipe.epochs):
        rng.shuffle(pieces)
        for k in range(0, len(pieces), recipe.batch):
            items = pieces[k:k + recipe.batch]
            with _autocast(recipe):
                value, ce = loss(model, data, items, recipe, generator)
            optimiser.zero_grad()
            value.backward()
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            if step % 20 == 0 or step == steps or step == max_steps:
                history.append((step, value.item(), ce.item()))
                log(f"draft train: epoch {epoch} step {step}/{steps} loss {value.item():.3f} ce {ce.item():.3f}")
            if step == max_steps:
                model.eval()
                return history
    model.eval()
    return history
