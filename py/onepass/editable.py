"""The reader's own proposer (step 5, "Beyond"): Python source typed in the page, checked before it drafts.

The default source is prompt lookup (``lookup.py``) written out as one plain
function, so the reader can change the rule and see the pass count move while
the text stays the same. Whatever the edited function does — raise, return
something that is not a list of token ids, propose ids outside the vocabulary —
ends in a ``ProposerError`` with a message for the page, never in a wrong text:
verification still decides what is kept.
"""

import io
import tokenize

from .contract import Refusal
from .drafted import Proposer
from .limits import MAX_LINE_NAMES, MAX_NEW_TOKENS

DEFAULT_SOURCE = '''def propose(text: list[int]) -> list[int]:
    """Prompt lookup: copy what followed the latest earlier occurrence of the text's last tokens."""
    for n in (2, 1):  # the last pair of tokens first, then the last token alone
        if len(text) <= n:
            continue
        tail = text[-n:]
        # Search backwards, starting just before the tail itself: the most recent match wins.
        for start in range(len(text) - n - 1, -1, -1):
            if text[start:start + n] == tail:
                return text[start + n:start + n + 6]  # up to six tokens
    return []  # nothing to copy: an ordinary pass
'''


class ProposerError(Refusal):
    """The reader's proposer could not be used; the message says why, in words for the page."""

    code = "proposer"


def compile_proposer(source: str, vocab_size: int) -> Proposer:
    """The ``propose`` function defined by ``source``, wrapped so that every draft is checked."""
    check_lines(source)
    try:
        code = compile(source, "<your proposer>", "exec")
    except SyntaxError as err:
        raise ProposerError(f"syntax error on line {err.lineno}: {err.msg}") from None
    except ValueError as err:  # a NUL character, in the Pythons that do not call it a syntax error
        raise ProposerError(f"your code cannot be read: {err}") from None
    namespace: dict = {}
    try:
        exec(code, namespace)
    except Exception as err:
        raise ProposerError(f"running your code failed: {kind(err)}: {err}") from None
    propose = namespace.get("propose")
    if not callable(propose):
        raise ProposerError("define a function propose(text) that returns a list of token ids")

    def checked(text: list[int]) -> list[int]:
        try:
            draft = propose(list(text))  # a copy: the proposer must not edit the text itself
        except Exception as err:
            raise ProposerError(f"propose raised {kind(err)}: {err}") from None
        return check_draft(draft, vocab_size)

    return checked


def check_lines(source: str) -> None:
    """Refuse a logical line of more than ``MAX_LINE_NAMES`` names before the parser sees it (see limits.py).

    Python's tokenizer reads line by line without recursing; source it cannot read is left to ``compile``,
    whose message is clearer.
    """
    names, first = 0, None  # in this logical line: its names, and the line it starts on
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NEWLINE:
                names, first = 0, None
            elif token.type == tokenize.NAME:
                names, first = names + 1, first or token.start[0]
                if names > MAX_LINE_NAMES:
                    raise ProposerError(f"line {first} of your code has over {MAX_LINE_NAMES} names: "
                                        "split it over several lines")
    except (tokenize.TokenError, SyntaxError, ValueError):
        return


def kind(err: Exception) -> str:
    """The name of the error the reader's code raised, without the Pyodide machinery a JavaScript error comes with."""
    return "a JavaScript error" if type(err).__module__.startswith("pyodide") else type(err).__name__


def check_draft(draft, vocab_size: int, longest: int = MAX_NEW_TOKENS) -> list[int]:
    """``draft`` as a list of ids, or a ProposerError saying what is wrong with it."""
    if not isinstance(draft, (list, tuple)):
        raise ProposerError(f"propose must return a list of token ids, not {type(draft).__name__}")
    # No run has room for more than `longest` draft tokens (drafted.cut_draft drops the rest), and checking a
    # proposer's million ids one by one would stall the page: the rest is dropped unchecked.
    draft = draft[:longest]
    for token in draft:
        # bool is an int in Python, but True is no token id.
        if isinstance(token, bool) or not isinstance(token, int):
            raise ProposerError(f"propose returned {token!r}: every item must be an int token id")
        if not 0 <= token < vocab_size:
            raise ProposerError(f"propose returned id {token}: ids run from 0 to {vocab_size - 1}")
    return list(draft)
