"""The one seam between the lesson's algorithms and a model.

Everything above this line is pure Python over lists of token ids; everything
below it (onnxruntime natively, onnxruntime-web in the browser) is a backend.
The shape follows gpt-fast's ``model_forward``: the algorithms only ever ask a
session to run one pass over some new tokens, and to forget tokens it has seen.

A pass is async because in the browser it awaits onnxruntime-web through JS.
"""

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Pass:
    """What one forward pass returns for the tokens it was fed, one row per fed position."""

    argmax: list[int]  # the model's predicted next id after each fed position
    topk_ids: list[list[int]]
    topk_probs: list[list[float]]
    seconds: float  # wall time of the pass, measured by the backend
    logits: list[list[float]] | None = None  # only when asked: 151,936 floats per row are costly to fetch


class Session(Protocol):
    """The state of one text being generated: its KV cache, or its ids when the cache is off.

    With the cache on, a pass processes only the new tokens; with it off, every
    pass re-reads the whole text so far. Both give the same rows and the same
    number of passes.
    """

    length: int  # tokens the session has processed

    async def forward(self, new_ids: list[int], *, logits: bool = False) -> Pass:
        """Run one pass over ``new_ids``, appended after the first ``length`` tokens."""

    def rollback(self, length: int) -> None:
        """Forget every token after the first ``length`` (rejected draft tokens)."""


@dataclass(frozen=True)
class Facts:
    """What the algorithms read from an export's ``manifest.json`` (never hard-coded)."""

    name: str
    eos_ids: frozenset[int]
    vocab_size: int
    top_k: int
    special_ids: dict[str, int]

    @classmethod
    def from_manifest(cls, manifest: dict) -> "Facts":
        return cls(
            name=manifest["model"]["name"],
            eos_ids=frozenset(manifest["eos_ids"]),
            vocab_size=manifest["vocab_size"],
            top_k=manifest["outputs"]["top_k"],
            special_ids=dict(manifest["special_ids"]),
        )


class Model(Protocol):
    """Opens sessions over one export and carries its manifest facts."""

    facts: Facts

    def session(self, kv_cache: bool = True) -> Session:
        """A fresh session with nothing processed yet."""
