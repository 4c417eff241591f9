"""What a run leaves behind for the pages to draw: one record per pass, and totals.

Plain dataclasses that turn into plain dicts (and JSON) with ``as_dict``, so
nothing but lists, numbers and strings crosses to the browser's UI.
"""

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class PassRecord:
    start: int  # tokens the session held before the pass: the position of fed[0]
    fed: list[int]  # the tokens this pass added (with the KV cache off it re-read the first `start` as well)
    draft: list[int]  # the proposal it checked; [] for an ordinary pass
    predicted: list[int]  # the model's own token after the text and after each draft token
    accepted: int  # draft tokens that agreed with the model, up to the first disagreement
    token: int  # the model's token at the first disagreement, or the bonus after a full draft
    added: list[int]  # what the pass appended to the text (accepted tokens, then token; cut at end-of-text)
    seconds: float

    @property
    def bonus(self) -> bool:
        """The whole draft was right, so the model's next token came free."""
        return bool(self.draft) and self.accepted == len(self.draft)


@dataclass(frozen=True)
class Run:
    mode: str
    kv_cache: bool
    prompt: list[int]
    tokens: list[int]  # the generated tokens, after the prompt
    stop: str  # "eos" or "max_new"
    passes: list[PassRecord]

    @property
    def seconds(self) -> float:
        return sum(record.seconds for record in self.passes)

    @property
    def tokens_per_pass(self) -> float:
        return len(self.tokens) / len(self.passes)

    def totals(self) -> dict:
        return {
            "passes": len(self.passes),
            "tokens": len(self.tokens),
            "drafted": sum(len(record.draft) for record in self.passes),
            "accepted": sum(record.accepted for record in self.passes),
            "tokens_per_pass": self.tokens_per_pass,
            "seconds": self.seconds,
        }

    def as_dict(self) -> dict:
        data = asdict(self)
        for record, row in zip(self.passes, data["passes"]):
            row["bonus"] = record.bonus
        data["totals"] = self.totals()
        return data
