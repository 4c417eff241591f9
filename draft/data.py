"""Self-distillation data from the shipped int8 target (``target.Target``): what it writes, what it predicts.

Texts, each tokenised with the target's own tokenizer, each say where it comes from and under what licence:

- ``chat``: the target's greedy answers to ``instructions.instructions()`` (this repository's own text) in
  Qwen's chat format (``onepass.examples.chat``), decoded in batches;
- ``library``: the target's greedy answers to ``instructions.library_instructions()``, coding requests made from
  the first lines of the standard library's docstrings (Python Software Foundation License 2.0);
- ``code``: Python's standard library sources on this machine (``sysconfig``'s stdlib folder, Python Software
  Foundation License 2.0, its ``LICENSE.txt``), each piece put in a chat turn as the assistant's answer to a
  request for that module, so the target reads it in the state it writes code for a reader;
- ``docs``: the reference documentation shipped inside the standard library (``pydoc_data/topics.py``, the
  text ``help()`` shows; the same licence), in a chat turn as the answer to a question about the topic.

For every text the target gives, at each position, its feature (the ``hidden`` output) and its argmax: the
labels are always the target's own choices, never the text's. The draft learns to predict the model.
"""

import ast
import sysconfig
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from onepass.examples import chat

from .instructions import instructions, library_instructions
from .target import Target

STDLIB = Path(sysconfig.get_paths()["stdlib"])
SOURCES = {
    "chat": "the target's greedy answers to draft/instructions.py (this repository's text, its licence)",
    "library": "the target's greedy answers to requests made from Python's standard library docstrings "
               "(draft/instructions.py's library_instructions; Python Software Foundation License 2.0)",
    "code": f"Python {'.'.join(STDLIB.name.removeprefix('python').split('.'))} standard library sources "
            "(Python Software Foundation License 2.0)",
    "docs": "Python's pydoc_data/topics.py reference text (Python Software Foundation License 2.0)",
}


@dataclass
class Sequences:
    """Token sequences with, per position, the target's feature and its next-token choice."""

    ids: list[np.ndarray] = field(default_factory=list)  # int64 [T] each
    hidden: list[np.ndarray] = field(default_factory=list)  # float16 [T, d] each: the target's feature at t
    argmax: list[np.ndarray] = field(default_factory=list)  # int64 [T] each: the target's choice after t
    kinds: list[str] = field(default_factory=list)  # which of ``SOURCES``
    starts: list[int] = field(default_factory=list)  # where the answer starts (after the chat prompt)

    def __len__(self) -> int:
        return len(self.ids)

    def tokens(self) -> int:
        return sum(len(ids) for ids in self.ids)

    def add(self, ids, argmax, hidden, kind: str, start: int) -> None:
        self.ids.append(np.asarray(ids, np.int64))
        self.argmax.append(np.asarray(argmax, np.int64))
        self.hidden.append(np.asarray(hidden, np.float16))
        self.kinds.append(kind)
        self.starts.append(start)

    def extend(self, other: "Sequences") -> None:
        for mine, theirs in zip((self.ids, self.hidden, self.argmax, self.kinds, self.starts),
                                (other.ids, other.hidden, other.argmax, other.kinds, other.starts)):
            mine.extend(theirs)

    def counts(self) -> dict:
        return {kind: sum(len(i) for i, k in zip(self.ids, self.kinds) if k == kind) for kind in SOURCES}


def encode(tokenizer, text: str) -> list[int]:
    """``tokenizer`` is the export's own ``tokenizers.Tokenizer`` (its tokenizer.json)."""
    return tokenizer.encode(text, add_special_tokens=False).ids


# Texts passed together are left-padded to one length, and a row's numbers then depend on how many masked keys come
# before it, unless that count is a multiple of the attention product's blocks: padded by 1-3 (mod 4) tokens, a text's
# features moved by 6-7 % and its choices now and then (benchmarks/FINDINGS.md, "The draft's batched data sees the
# target a little differently"). Texts are therefore grouped by their length modulo PAD_ALIGN, so every row's padding
# is a multiple of it and its numbers are those of the text alone, as the tab computes them (test_draft_build.py).
PAD_ALIGN = 16


def aligned_batches(lengths: list[int], batch: int) -> list[list[int]]:
    """Indices of ``lengths`` in groups of like length whose lengths agree modulo PAD_ALIGN, about ``batch`` each
    (from two thirds to one and a half times it: a small remainder joins its class's groups instead of taking a pass
    of its own, which costs almost what a full one does). Which texts go together changes no number."""
    groups = []
    for residue in range(PAD_ALIGN):
        order = sorted((i for i, n in enumerate(lengths) if n % PAD_ALIGN == residue), key=lambda i: (lengths[i], i))
        if not order:
            continue
        count = max(1, round(len(order) / batch))
        cuts = [len(order) * k // count for k in range(count + 1)]
        groups += [order[a:b] for a, b in zip(cuts, cuts[1:])]
    return groups


def chat_answers(target: Target, tokenizer, prompts: list[str], max_new: int, batch: int, into: Sequences,
                 kind: str = "chat") -> None:
    """The target's greedy answers to ``prompts``, decoded about ``batch`` at a time (``aligned_batches``)."""
    encoded = [encode(tokenizer, chat(p)) for p in prompts]
    for indices in aligned_batches([len(ids) for ids in encoded], batch):
        group = [encoded[j] for j in indices]
        for prompt, (ids, argmax, hidden) in zip(group, target.greedy(group, max_new)):
            into.add(ids, argmax, hidden, kind, len(prompt))


def code_pieces(tokenizer, tokens: int, length: int) -> list[tuple[str, str]]:
    """(request, code) pairs of about ``length`` tokens from the standard library, spread over its modules in a
    fixed order until ``tokens`` are reached: each module's first piece after its docstring."""
    files = sorted(STDLIB.glob("*.py"))
    # A fixed stride through the sorted files visits modules of every kind, not just the a's.
    stride = 7
    visit = [files[(k * stride) % len(files)] for k in range(len(files))]
    pieces, total = [], 0
    for path in visit:
        text = path.read_text(errors="replace")
        try:
            body = ast.parse(text).body
        except SyntaxError:
            continue
        begin = body[1].lineno - 1 if len(body) > 1 and isinstance(body[0], ast.Expr) else 0
        lines = text.splitlines()[begin:]
        ids = encode(tokenizer, "\n".join(lines))[:length]
        if len(ids) < length // 2:
            continue
        code = tokenizer.decode(ids)
        pieces.append((f"Show me the start of Python's {path.stem} module.", f"```python\n{code}\n```"))
        total += len(ids)
        if total >= tokens:
            break
    return pieces


def doc_pieces(tokenizer, tokens: int, length: int) -> list[tuple[str, str]]:
    """(question, answer) pairs from pydoc's topics, in sorted order of topic, each cut to ``length`` tokens."""
    from pydoc_data.topics import topics

    pieces, total = [], 0
    for name in sorted(topics):
        ids = encode(tokenizer, topics[name].strip())[:length]
        if len(ids) < length // 4:
            continue
        pieces.append((f"What does Python's documentation say about {name}?", tokenizer.decode(ids)))
        total += len(ids)
        if total >= tokens:
            break
    return pieces


def teacher_forced(target: Target, tokenizer, pairs: list[tuple[str, str]], kind: str, into: Sequences,
                   batch: int) -> None:
    """The target's pass over each (request, answer) chat exchange, ``batch`` exchanges per pass (``forced``)."""
    texts = []
    for request, answer in pairs:
        prompt = encode(tokenizer, chat(request))
        texts.append((prompt + encode(tokenizer, answer), len(prompt)))
    forced(target, texts, kind, into, batch)


def forced(target: Target, texts: list[tuple[list[int], int]], kinds, into: Sequences, batch: int) -> None:
    """The target's features and choices over each (ids, start) text, added to ``into`` in the texts' order, one
    teacher-forced pass for about ``batch`` texts (``aligned_batches``; left-padded, as ``Target.greedy`` pads).
    ``kinds``: one for all, or one a text."""
    kinds = [kinds] * len(texts) if isinstance(kinds, str) else list(kinds)
    found = {}
    for indices in aligned_batches([len(ids) for ids, _ in texts], batch):
        group = [texts[i] for i in indices]
        width = max(len(ids) for ids, _ in group)
        pad = np.array([width - len(ids) for ids, _ in group], np.int64)
        argmax, hidden, _ = target.run(np.array([[0] * (width - len(ids)) + list(ids) for ids, _ in group]), pad=pad)
        for row, i in enumerate(indices):
            # Copies, in the kept precision: a view would keep the pass's whole float32 [B, n, d] alive.
            found[i] = (argmax[row, pad[row]:].copy(), hidden[row, pad[row]:].astype(np.float16))
    # In the texts' own order, so the first k texts' rows are the first k sequences.
    for i, (ids, start) in enumerate(texts):
        into.add(ids, *found[i], kinds[i], start)


@dataclass(frozen=True)
class Plan:
    """How much of each text to make: the chat answers cost one pass per token (batched), the rest one per text."""

    instructions: int  # how many of ``instructions()`` (all: -1)
    max_new: int
    batch: int  # answers decoded together
    forced_batch: int  # texts per teacher-forced pass
    code_tokens: int
    doc_tokens: int
    length: int  # tokens per code or docs piece
    library: int = 0  # requests made from the standard library's docstrings (all: -1)


def make(target: Target, tokenizer, plan: Plan, log=print) -> tuple[Sequences, dict]:
    """The data of ``plan``, and how long each part took."""
    data, seconds = Sequences(), {}
    prompts = instructions()
    prompts = prompts if plan.instructions < 0 else prompts[:plan.instructions]
    began = time.perf_counter()
    chat_answers(target, tokenizer, prompts, plan.max_new, plan.batch, data)
    seconds["chat"] = time.perf_counter() - began
    log(f"draft data: chat {data.counts()['chat']} tokens in {seconds['chat']:.0f} s")
    if plan.library:
        began = time.perf_counter()
        chat_answers(target, tokenizer, library_instructions(plan.library), plan.max_new, plan.batch, data, "library")
        seconds["library"] = time.perf_counter() - began
        log(f"draft data: library {data.counts()['library']} tokens in {seconds['library']:.0f} s")
    for kind, pieces in (("code", code_pieces(tokenizer, plan.code_tokens, plan.length)),
                         ("docs", doc_pieces(tokenizer, plan.doc_tokens, plan.length))):
        began = time.perf_counter()
        teacher_forced(target, tokenizer, pieces, kind, data, plan.forced_batch)
        seconds[kind] = time.perf_counter() - began
        log(f"draft data: {kind} {data.counts()[kind]} tokens in {seconds[kind]:.0f} s")
    return data, seconds
