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
from .heads import Eagle, Medusa


@dataclass(frozen=True)
class Recipe:
    epochs: int = 2
    lr: float = 1e-3
    batch: int = 8  # chunks per step
    length: int = 256  # rows per chunk
    steps: int = 2  # draft steps unrolled in training
    noise: float = 0.2  # uniform noise on the input features, as a fraction of their mean magnitude
    ce_weight: float = 0.5
    soft: bool = False  # cross-entropy against the target's whole distribution over the readout, not its argmax
    bfloat16: bool = True  # autocast where the processor has bfloat16 arithmetic (``precision``)
    prompt_rows: bool = True  # train on the prompts' rows too, not only the answers' (FINDINGS: "The prompts' rows")


def precision(recipe: Recipe) -> str:
    """The arithmetic ``fit`` trains in on this machine: "bfloat16" where asked for and done in hardware."""
    hardware = torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()
    return "bfloat16" if recipe.bfloat16 and hardware else "float32"


def _autocast(recipe: Recipe):
    if precision(recipe) == "bfloat16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def chunks(data: Sequences, length: int, prompt_rows: bool = True) -> list[tuple[int, int]]:
    """(sequence, first row) of every training chunk: each sequence cut into pieces of at most ``length`` rows.

    Without ``prompt_rows`` a sequence's chunks start at its prompt's last row, whose feature and the answer's first
    token draft the answer's second: the first question a drafted round asks. A draft never drafts inside a prompt,
    but its rows (a fifth of the chat data) still teach it: without them training took a quarter less time and the
    draft accepted 0.012 less (benchmarks/FINDINGS.md, "The prompts' rows"), so the recipe keeps them.
    """
    firsts = [0 if prompt_rows else max(0, start - 1) for start in data.starts]
    return [(i, start) for i, (ids, first) in enumerate(zip(data.ids, firsts))
            for start in range(first, len(ids) - 1, length)]


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


def eagle_loss(model: Eagle, batch, recipe: Recipe, generator: torch.Generator):
    feats, tokens, wanted, labels = batch
    scale = feats.abs().mean()
    noisy = feats + (torch.rand(feats.shape, generator=generator) * 2 - 1) * recipe.noise * scale
    live = labels >= 0
    total, first_ce = 0.0, None
    for s, out in enumerate(model.unrolled(noisy, tokens, recipe.steps), start=1):
        # Step s at row t drafts the token after t; rows before the (s-1)-th have no round that long.
        rows = live.clone()
        rows[:, :s - 1] = False
        regression = F.smooth_l1_loss(out[rows], wanted[rows])
        logits = model.readout(out[rows])
        if recipe.soft:
            # EAGLE's classification loss: the target's own distribution (its readout of its feature) as the label.
            with torch.no_grad():
                p = model.readout(wanted[rows]).float().softmax(-1)
            ce = -(p * logits.float().log_softmax(-1)).sum(-1).mean()
        else:
            ce = F.cross_entropy(logits, labels[rows])
        total = total + regression + recipe.ce_weight * ce
        first_ce = ce if first_ce is None else first_ce
    return total / recipe.steps, first_ce


def medusa_loss(model: Medusa, data: Sequences, items, length: int):
    """Head j on the feature at t - 1 learns the target's choice of token t + j (its argmax at t + j - 1)."""
    feats, labels = [], []
    for i, start in items:
        end = min(start + length, len(data.ids[i]))
        feats.append(torch.from_numpy(data.hidden[i][start:end].astype(np.float32)))
        labels.append(model.readout.index[torch.from_numpy(data.argmax[i][start:end])])
    feats, labels = _pad(feats), _pad(labels, value=-1)
    total = 0.0
    for j, logits in enumerate(model(feats), start=1):
        target = labels[:, j:]
        live = target >= 0
        total = total + F.cross_entropy(logits[:, :-j][live], target[live])
    return total / len(model.blocks), total


def fit(model, data: Sequences, recipe: Recipe, seed: int = 0, log=print):
    """Train ``model`` in place; returns the losses logged (every 20 steps)."""
    torch.manual_seed(seed)
    rng, generator = random.Random(seed), torch.Generator().manual_seed(seed)
    trained = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trained, lr=recipe.lr, weight_decay=0.0)
    pieces = chunks(data, recipe.length, recipe.prompt_rows)
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
                if isinstance(model, Eagle):
                    loss, ce = eagle_loss(model, eagle_batch(model, data, items, recipe.length), recipe, generator)
                else:
                    loss, ce = medusa_loss(model, data, items, recipe.length)
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trained, 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            if step % 20 == 0 or step == steps:
                history.append((step, loss.item(), ce.item()))
                log(f"draft train: epoch {epoch} step {step}/{steps} loss {loss.item():.3f} ce {ce.item():.3f}")
    model.eval()
    return history
