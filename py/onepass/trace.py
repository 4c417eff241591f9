"""What a run leaves behind for the pages to draw: one record per pass, and totals.

Plain dataclasses for the algorithms; what the pages are sent of them is the
contract's (``as_row``, ``totals``, ``as_dict``: ``contract.PassRow``,
``Totals``, ``RunRecord``), so nothing but lists, numbers and strings crosses
to the browser's UI.
"""

from dataclasses import asdict, dataclass

from .contract import PassRow, RunRecord, Totals


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

    def as_row(self) -> PassRow:
        return PassRow(**asdict(self), bonus=self.bonus)


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

    def totals(self) -> Totals:
        return Totals(passes=len(self.passes), tokens=len(self.tokens),
                      drafted=sum(len(record.draft) for record in self.passes),
                      accepted=sum(record.accepted for record in self.passes),
                      tokens_per_pass=self.tokens_per_pass, seconds=self.seconds)

    def as_dict(self) -> RunRecord:
        return RunRecord(mode=self.mode, kv_cache=self.kv_cache, prompt=list(self.prompt), tokens=list(self.tokens),
                         stop=self.stop, passes=[record.as_row() for record in self.passes], totals=self.totals())
