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
    """What one forward pass returns: one row per fed position, from the first one asked for (``rows_from``)."""

    argmax: list[int]  # the model's predicted next id after each fed position
    topk_ids: list[list[int]]
    topk_probs: list[list[float]]
    seconds: float  # wall time of the pass, measured by the backend
    logits: list[list[float]] | None = None  # only when asked: 151,936 floats per row are costly to fetch
    hidden: list[list[float]] | None = None  # only when asked: the model's features at the last fed positions


class Session(Protocol):
    """The state of one text being generated: its KV cache, or its ids when the cache is off.

    With the cache on, a pass processes only the new tokens; with it off, every
    pass re-reads the whole text so far. Both give the same rows and the same
    number of passes.
    """

    length: int  # tokens the session has processed

    async def forward(self, new_ids: list[int], *, logits: bool = False, rows_from: int = 0,
                      hidden: int = 0) -> Pass:
        """Run one pass over ``new_ids``, appended after the first ``length`` tokens.

        The pass returns the rows of ``new_ids[rows_from:]`` only: a caller that needs the prediction after
        the last token alone asks for ``rows_from=len(new_ids) - 1``, and the model skips its output layer
        for the others. Every token still enters the KV cache. ``hidden`` asks for the model's features (its
        last hidden states, what a draft model reads) at the last ``hidden`` of ``new_ids``, whatever
        ``rows_from`` is.
        """

    def rollback(self, length: int) -> None:
        """Forget every token after the first ``length`` (rejected draft tokens)."""


def check_rows(new_ids: list[int], rows_from: int, hidden: int = 0) -> None:
    """A pass must return at least one row: ``rows_from`` indexes one of ``new_ids``; and at most one feature
    per new token."""
    if not 0 <= rows_from < len(new_ids):
        raise ValueError(f"rows_from must index one of the {len(new_ids)} new tokens, got {rows_from}")
    if not 0 <= hidden <= len(new_ids):
        raise ValueError(f"hidden asks for the features of 0 to {len(new_ids)} new tokens, got {hidden}")


def target_identity(manifest: dict) -> str:
    """A model's identity: what its export's manifest states (``model_export.manifest.arithmetic_identity``: what it
    computes, the same from any clone and processor), or, for a manifest that states none, its files' sha256 in
    order. The one definition: a draft names the model it was trained for by it, the site ties traces and caches
    to it."""
    return manifest.get("identity") or ":".join(entry["sha256"] for entry in manifest["files"])


@dataclass(frozen=True)
class Facts:
    """What the algorithms read from an export's ``manifest.json`` (never hard-coded)."""

    name: str
    eos_ids: frozenset[int]
    vocab_size: int
    top_k: int

    @classmethod
    def from_manifest(cls, manifest: dict) -> "Facts":
        return cls(
            name=manifest["model"]["name"],
            eos_ids=frozenset(manifest["eos_ids"]),
            vocab_size=manifest["vocab_size"],
            top_k=manifest["outputs"]["top_k"],
        )


class Model(Protocol):
    """Opens sessions over one export and carries its manifest facts."""

    facts: Facts

    def session(self, kv_cache: bool = True) -> Session:
        """A fresh session with nothing processed yet."""
