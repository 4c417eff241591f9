"""The toy backend: a deterministic n-gram language model in pure Python, behind the same seam.

For the oracle tests' fast loop (drafted == greedy over thousands of prompts in
seconds, with no export); never a stand-in for the real model in the pages.
The next-token scores after a position depend only on the last ``order`` ids
up to it, drawn once per context from a seeded generator; a small vocabulary
makes the greedy text fall into cycles, so prompt lookup's drafts are often
right and the accept, bonus and end-of-text paths are all exercised.

It keeps the seam's contract as the native backend does: one row per fed
position; with the cache on, a pass reads only what the session holds (its
"KV cache" is the ids it has processed) plus the new ids, and rollback drops
the tail; with it off, every pass re-reads the whole text and returns the new
rows. A session that kept a rejected draft token would predict from it, as a
stale KV cache would.
"""

import math
import random
import time
from functools import lru_cache

from ..draft_model import DraftStep
from ..seam import Facts, Pass, check_rows
from .sessions import CachedSession, UncachedSession

VOCAB_SIZE = 32
ORDER = 2
TOP_K = 10
EOS_IDS = frozenset({0})
SPREAD = 8.0  # logits are uniform in [0, SPREAD): a peaked distribution, as a language model's often is


class ToyModel:
    """The toy language model; opens one ``Session`` per text."""

    def __init__(self, vocab_size: int = VOCAB_SIZE, order: int = ORDER, seed: int = 0,
                 eos_ids: frozenset[int] = EOS_IDS, top_k: int | None = None):
        top_k = min(TOP_K, vocab_size) if top_k is None else top_k
        if order < 1 or not 0 < top_k <= vocab_size or not all(0 <= i < vocab_size for i in eos_ids):
            raise ValueError("need order >= 1, 0 < top_k <= vocab_size and eos ids inside the vocabulary")
        self.facts = Facts(name=f"toy {order}-gram, {vocab_size} ids, seed {seed}", eos_ids=frozenset(eos_ids),
                           vocab_size=vocab_size, top_k=top_k)
        self.order, self.seed = order, seed
        # The rows are a pure function of the context, so computing each once is a property of the model, not a
        # shortcut: the uncached session still re-reads every position of the text on every pass.
        self.row = lru_cache(maxsize=None)(self._row)

    def session(self, kv_cache: bool = True) -> CachedSession | UncachedSession:
        return CachedSession(self) if kv_cache else UncachedSession(self)

    def run(self, ids: list[int], past: list[int] | None, logits: bool, first_row: int = 0,
            hidden: int = 0) -> tuple[Pass, list[int]]:
        """One pass over ``ids`` after the ``past`` ids: one row per position of ``ids[first_row:]``, and the
        ids the next pass reads after (the toy's "KV cache"). Its features (``hidden``) are the contexts
        themselves, ``features``."""
        check_rows(ids, first_row, hidden)
        if not all(0 <= i < self.facts.vocab_size for i in ids):
            raise ValueError(f"token ids must lie in 0..{self.facts.vocab_size - 1}")
        past = past or []
        began = time.perf_counter()
        text = past[-(self.order - 1):] + ids if self.order > 1 else list(ids)
        first = len(text) - len(ids) + first_row
        rows = [self.row(tuple(text[max(0, i - self.order + 1):i + 1])) for i in range(first, len(text))]
        result = Pass(argmax=[row[0] for row in rows], topk_ids=[row[1] for row in rows],
                      topk_probs=[row[2] for row in rows], seconds=time.perf_counter() - began,
                      logits=[list(row[3]) for row in rows] if logits else None,
                      hidden=[self.feature(text[:i + 1]) for i in range(len(text) - hidden, len(text))] if hidden else None)
        return result, past + ids

    def feature(self, text: list[int]) -> list[float]:
        """The toy's hidden state after ``text``: its context (the last ``order`` ids, -1 before the start), which
        is all its next row depends on."""
        context = text[-self.order:]
        return [-1.0] * (self.order - len(context)) + [float(token) for token in context]

    def cut(self, past: list[int], length: int) -> list[int]:
        return past[:length]

    def _row(self, context: tuple[int, ...]) -> tuple[int, list[int], list[float], tuple[float, ...]]:
        """Argmax, top-k ids and probabilities, and logits after ``context`` (its last ``order`` ids)."""
        # A string seed is hashed with SHA-512 by random.Random: the same scores in every process.
        rng = random.Random(f"{self.seed}/{','.join(map(str, context))}")
        logits = tuple(SPREAD * rng.random() for _ in range(self.facts.vocab_size))
        # Ties (vanishingly rare with float scores) go to the lower id, as numpy's argmax does.
        ranked = sorted(range(len(logits)), key=lambda i: (-logits[i], i))
        top = max(logits)
        weights = [math.exp(value - top) for value in logits]
        total = sum(weights)
        topk = ranked[:self.facts.top_k]
        return ranked[0], topk, [weights[i] / total for i in topk], logits


DRAFT_FLATTENING = 0.5  # the toy draft's q: the toy's top k with its peaks flattened, so q differs from p


class ToyDraft:
    """A draft model for the toy (``draft_model.DraftModel``): from the toy's features (its contexts) it knows
    the toy's next token exactly, and spoils each with probability ``error_rate`` (a wrong id instead). With
    0 every drafted token must be accepted, which proves that features and tokens line up in the drafted loop;
    with 1 none can be. For sampling, its q is the toy's top k flattened (``DRAFT_FLATTENING``)."""

    def __init__(self, model: ToyModel, error_rate: float = 0.0, rng: random.Random | None = None,
                 window: int = 4):
        self.model, self.error_rate, self.rng, self.window = model, error_rate, rng or random.Random(0), window
        self.answers = None  # no table of earlier answers: "lookup+draft" copies from the text alone

    async def step(self, features: list[list[float]], tokens: list[int], *, sampling: bool = False) -> DraftStep:
        context = [int(x) for x in features[-1] if x >= 0] + [tokens[-1]]
        feature = self.model.feature(context)
        token, ids, probs, _ = self.model.row(tuple(context[-self.model.order:]))
        if self.rng.random() < self.error_rate:
            token = (token + 1) % self.model.facts.vocab_size
        weights = [prob ** DRAFT_FLATTENING for prob in probs]
        q = [weight / sum(weights) for weight in weights]
        return DraftStep(feature=feature, token=token, seconds=0.0, ids=list(ids), probs=q,
                         confidence=q[list(ids).index(token)] if token in ids else 0.0)
