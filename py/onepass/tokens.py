"""What the pages show of tokens: each id's own text (its label), and a run's text streamed whole characters at a time.

A tokenizer here is anything with ``encode(text) -> ids`` and ``decode(ids) ->
str`` (the worker's, over its JavaScript tokenizer; the native one; a test's
bytes); one with ``pieces(ids)`` labels many ids in one call.
"""

from typing import Protocol

from .limits import check_characters


class Tokenizer(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


def encoded(tokenizer: Tokenizer, text, what: str = "text") -> list[int]:
    """``text``'s ids; a text far over the token limit is refused by its length before the tokenizer spends seconds on it."""
    return list(tokenizer.encode(check_characters(text, what)))


def labels(tokenizer: Tokenizer, ids) -> dict[str, str]:
    """Each id's own text, for drawing tokens one by one (a piece of a split character shows as U+FFFD).

    A tokenizer with ``pieces(ids)`` (the browser's, the native one) decodes them all in one call.
    """
    unique = sorted(set(ids))
    pieces = tokenizer.pieces(unique) if hasattr(tokenizer, "pieces") else [tokenizer.decode([t]) for t in unique]
    return {str(token): piece for token, piece in zip(unique, pieces)}


def pass_labels(tokenizer: Tokenizer, row: dict) -> dict[str, str]:
    """The labels a pass is drawn with: its draft, its predictions, what it added, and the n-gram it copied from."""
    return labels(tokenizer, row["draft"] + row["predicted"] + row["added"] + ((row.get("match") or {}).get("ngram") or []))


class Stream:
    """A run's text as it grows: ``push(ids)`` returns the text the new ids complete, whole characters only.

    It decodes only the ids since the text was last whole, so a pass costs its own tokens, not the whole text's.
    """

    def __init__(self, tokenizer: Tokenizer):
        self.tokenizer = tokenizer
        self.ids: list[int] = []  # since the text was last whole
        self.shown = ""  # of those ids' text

    def push(self, added: list[int]) -> str:
        self.ids += added
        # A character split across tokens decodes as U+FFFD until its last byte arrives: hold it back. (The one
        # streaming of a run's text: the worker's decode request streams through here too, with `pieces`.)
        text = self.tokenizer.decode(self.ids)
        complete = text.rstrip("\ufffd")
        piece, self.shown = complete[len(self.shown):], complete
        if complete == text:
            # Nothing held back: the bytes so far are whole characters, so what follows decodes on its own.
            self.ids, self.shown = [], ""
        return piece

    def end(self) -> str:
        """What ``push`` still holds back once no more ids will come: a character left unfinished, as U+FFFD."""
        rest = self.tokenizer.decode(self.ids)[len(self.shown):]
        self.ids, self.shown = [], ""
        return rest
