"""Self-distillation data: what the target writes, and what it predicts at every position of a text.

Two kinds of text, each tokenised with the target's own tokenizer:

- chat: the target's greedy answers to ``instructions.instructions()`` in Qwen's chat format;
- code and prose: Python's own standard library sources on this machine (their docstrings and comments are
  the prose), under the Python Software Foundation licence (``LICENSE.txt`` beside them).

For every sequence the target is run once, teacher-forced, and gives at each position its final hidden state
(after the last norm, the input of its output layer) and its argmax: the labels are the target's own choices,
never the text's. The draft learns to predict the model, not the corpus.
"""

import sysconfig
from dataclasses import dataclass
from pathlib import Path

import torch
from onepass.examples import chat

STDLIB = Path(sysconfig.get_paths()["stdlib"])


@dataclass
class Sequences:
    """Token sequences with, per position, the target's final hidden state and its next-token choice."""

    ids: list[torch.Tensor]  # int64 [T] each
    hidden: list[torch.Tensor]  # float16 [T, d] each
    argmax: list[torch.Tensor]  # int64 [T] each: the target's prediction after each position
    prompt_lengths: list[int]  # the chat prompt's tokens (0 for plain text): answers start there

    def __len__(self) -> int:
        return len(self.ids)

    def tokens(self) -> int:
        return sum(len(ids) for ids in self.ids)


@torch.no_grad()
def greedy_answers(model, tokenizer, prompts: list[str], max_new: int, batch: int = 8) -> list[list[int]]:
    """The target's greedy continuation of each prompt (token ids, prompt excluded), batched with left padding."""
    tokenizer.padding_side = "left"
    out = []
    for i in range(0, len(prompts), batch):
        enc = tokenizer(prompts[i:i + batch], return_tensors="pt", padding=True, add_special_tokens=False)
        gen = model.generate(**enc, max_new_tokens=max_new, do_sample=False, pad_token_id=tokenizer.pad_token_id)
        for row in gen[:, enc["input_ids"].shape[1]:].tolist():
            out.append([t for t in row if t != tokenizer.pad_token_id])
    return out


@torch.no_grad()
def teacher_forced(model, sequences: list[list[int]], batch: int = 8, rows: int = 4096) -> tuple[list, list]:
    """Each sequence's final hidden states (float16) and the target's argmax after every position."""
    hidden, argmax = [], []
    head = model.get_output_embeddings().weight
    for i in range(0, len(sequences), batch):
        group = sequences[i:i + batch]
        width = max(len(s) for s in group)
        ids = torch.zeros(len(group), width, dtype=torch.long)
        mask = torch.zeros(len(group), width, dtype=torch.long)
        for j, s in enumerate(group):
            ids[j, :len(s)], mask[j, :len(s)] = torch.tensor(s), 1
        states = model.model(input_ids=ids, attention_mask=mask).last_hidden_state
        for j, s in enumerate(group):
            h = states[j, :len(s)]
            # The output layer over the whole vocabulary, a few thousand rows at a time.
            best = torch.cat([(h[k:k + rows] @ head.T).argmax(-1) for k in range(0, len(s), rows)])
            hidden.append(h.half())
            argmax.append(best)
    return hidden, argmax


def stdlib_chunks(tokenizer, count: int, length: int, skip: int = 0) -> list[list[int]]:
    """``count`` token chunks of ``length`` from the standard library's sources, every file in a fixed order."""
    files = sorted(p for p in STDLIB.glob("*.py"))
    chunks = []
    for path in files[skip:]:
        ids = tokenizer(path.read_text(errors="replace"), add_special_tokens=False)["input_ids"]
        chunks += [ids[k:k + length] for k in range(0, len(ids) - length + 1, length)][:2]
        if len(chunks) >= count:
            break
    return chunks[:count]


def written_tokens(tokenizer, data: Sequences, size: int, vocab: int, text_files: int = 400) -> torch.Tensor:
    """The readout's vocabulary: the ``size`` tokens the target writes most (its own choices in ``data``), then, to
    fill the list, those most frequent in the standard library's text (tokenising is cheap; passes are not)."""
    counts = torch.bincount(torch.cat(data.argmax), minlength=vocab).double()
    text = torch.zeros(vocab, dtype=torch.float64)
    for path in sorted(STDLIB.glob("*.py"))[:text_files]:
        ids = tokenizer(path.read_text(errors="replace"), add_special_tokens=False)["input_ids"]
        text += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=vocab).double()
    # The target's choices first; the text's counts, each below one choice, only order the rest.
    score = counts + text / (text.max() + 1)
    return score.argsort(descending=True)[:size].sort().values


def chat_data(model, tokenizer, prompts: list[str], max_new: int = 128) -> Sequences:
    """The target's greedy answers to ``prompts`` (chat format added here), and its pass over each whole exchange."""
    prompts = [chat(p) for p in prompts]
    prompt_ids = [tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
    answers = greedy_answers(model, tokenizer, prompts, max_new)
    sequences = [p + a for p, a in zip(prompt_ids, answers)]
    hidden, argmax = teacher_forced(model, sequences)
    return Sequences(ids=[torch.tensor(s) for s in sequences], hidden=hidden, argmax=argmax,
                     prompt_lengths=[len(p) for p in prompt_ids])


def text_data(model, tokenizer, chunks: int, length: int = 256) -> Sequences:
    """The target's pass over ``chunks`` pieces of the standard library's sources."""
    sequences = stdlib_chunks(tokenizer, chunks, length)
    hidden, argmax = teacher_forced(model, sequences)
    return Sequences(ids=[torch.tensor(s) for s in sequences], hidden=hidden, argmax=argmax,
                     prompt_lengths=[0] * len(sequences))


def join(*parts: Sequences) -> Sequences:
    return Sequences(ids=[x for p in parts for x in p.ids], hidden=[x for p in parts for x in p.hidden],
                     argmax=[x for p in parts for x in p.argmax], prompt_lengths=[x for p in parts for x in p.prompt_lengths])
