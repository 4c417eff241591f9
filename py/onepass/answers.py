"""Copying from the model's own earlier answers: a draft that costs no pass.

Prompt lookup copies from the text itself; this copies from a table of what the model wrote after the same few
tokens in its answers to the draft's training requests (``draft/answers.py`` builds it: the confident rows only).
The text's last 4, then 3, then 2 tokens are looked up; the token found is appended and looked up again, up to
``MAX_DRAFT`` tokens. Reference: He et al., "REST: Retrieval-Based Speculative Decoding" (2023), which retrieves
from a datastore of texts by the longest matching suffix. Verification keeps the text exact whatever it proposes.
"""

import json

from .lookup import MAX_DRAFT


class Answers:
    """The table of ``answers.json``: ``{"orders": [4, 3, 2], "rows": {"4": [[a, b, c, d, next], ...], ...}}``, given
    as that dict or as its JSON text; a text is read on first use, or when ``ready`` is called (the tab's table, 4.8
    MB of JSON, took about 0.6 s of Python's time, which the tab's load paid where it was read at once:
    benchmarks/FINDINGS.md, "The draft's table of answers read on first use")."""

    def __init__(self, table: dict | str):
        self.table = table
        self.orders: list[int] = []
        self.next: dict[int, dict[tuple, int]] | None = None

    def ready(self) -> "Answers":
        """The table read, once."""
        if self.next is None:
            table = json.loads(self.table) if isinstance(self.table, str) else self.table
            self.orders = [int(n) for n in table["orders"]]
            self.next = {n: {tuple(row[:-1]): row[-1] for row in table["rows"][str(n)]} for n in self.orders}
            self.table = None
        return self

    def __len__(self) -> int:
        return sum(len(rows) for rows in self.ready().next.values())

    def following(self, text: list[int]) -> int | None:
        """The token the answers continue ``text``'s longest known tail with, or None."""
        table = self.ready().next
        for n in self.orders:
            if len(text) >= n:
                found = table[n].get(tuple(text[-n:]))
                if found is not None:
                    return found
        return None

    def __call__(self, text: list[int], max_draft: int = MAX_DRAFT) -> list[int]:
        """Up to ``max_draft`` tokens, each the answers' continuation of the text with the ones before it."""
        text, proposal = list(text), []
        while len(proposal) < max_draft:
            token = self.following(text)
            if token is None:
                break
            proposal.append(token)
            text.append(token)
        return proposal
