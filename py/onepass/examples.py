"""The worked examples of step 5 ("Copy and check"), run with prompt lookup on the real model.

Prompts are in Qwen's chat format, which the instruct model follows and ends
with ``<|im_end|>``. Each run shows one side of prompt lookup:

- Capitals: the scaffolding " The capital of" is copied from the sentence
  before and kept; after a country, lookup copies the prompt's list of
  countries (", Spain, ..."), after " is" the city before, and both are
  rejected; after a new city there is nothing to copy.
- Past tense: long runs such as " the mat and" are copied from the sentence
  being rewritten; the model changes only what the tense needs ("watches" ->
  "watched").
- Spelling: the spelled-out letters appear nowhere in the prompt, both copies
  (the chat markup after the question's line break; after the second " r",
  what followed the first) are rejected, and every
  pass yields one token, exactly as in step 2. The default model answers the
  first two correctly but misspells "orange" ("O r n o r e"; "O r n o i e" from
  an export calibrated partly in float32: the letters sit on near-ties), and
  the drafted run writes the same misspelling: drafting changes the passes,
  never the text.

Past tense says "this text": asked to rewrite "the text", the export calibrated
in float64 throughout repeats the sentence unchanged natively here, though not
in the tab; this wording rewrites it in both (benchmarks/FINDINGS.md, "One
export on every processor").

``recorded`` runs an example as step 5's panel does (prompt lookup with its
drafting timed, then one token per pass) for the tests of ``estimate.py``.
"""

from dataclasses import asdict, dataclass

from .drafted import drafted
from .greedy import greedy
from .lookup import MAX_DRAFT, prompt_lookup
from .proposers import Timed
from .seam import Model


def chat(user: str) -> str:
    """One user turn in Qwen's ChatML, ending where the assistant's answer begins."""
    return f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"


@dataclass(frozen=True)
class Example:
    key: str
    title: str
    prompt: str
    max_new: int  # a ceiling; each example ends with <|im_end|> well before it
    point: str  # what the run shows, in a few words (step 5's panel shows it beside the page's prose)

    def as_dict(self) -> dict:
        return asdict(self)


EXAMPLES = (
    Example(
        key="capitals",
        title="Capitals",
        prompt=chat("Write one short sentence for each country, of the form 'The capital of X is Y.': "
                    "France, Germany, Italy, Spain, Poland, Austria, Greece, Norway."),
        max_new=96,
        point="copies win on repeated scaffolding, lose on new facts.",
    ),
    Example(
        key="past-tense",
        title="Past tense",
        prompt=chat("Rewrite this text so that it happened yesterday: \"Every day, the cat sits on the mat and watches "
                    "the birds in the garden, and the dog sleeps by the door of the kitchen.\""),
        max_new=64,
        point="long runs copied from the original; only the verbs change.",
    ),
    Example(
        key="spelling",
        title="Spelling",
        prompt=chat("Spell the word \"orange\" letter by letter, with a space between the letters."),
        max_new=32,
        point="no letter appears before, so no copy survives.",
    ),
)


def example(key: str) -> Example:
    for candidate in EXAMPLES:
        if candidate.key == key:
            return candidate
    raise KeyError(f"no example {key!r}; choose from {', '.join(e.key for e in EXAMPLES)}")


async def recorded(model: Model, prompt: list[int], case: Example) -> dict:
    """``case`` with prompt lookup and one token per pass, as JSON-ready dicts with the drafting time."""
    timed = Timed(prompt_lookup)
    lookup = await drafted(model, prompt, timed, case.max_new, mode="lookup")
    return {"lookup": {**lookup.as_dict(), "proposer_seconds": timed.seconds, "max_draft": MAX_DRAFT},
            "greedy": (await greedy(model, prompt, case.max_new)).as_dict()}
