"""Prompt lookup: a nearly free draft, copied from earlier in the text itself.

Take the last two tokens, find the most recent earlier place where the same
two occur, and propose the (up to) six tokens that followed them there;
failing a pair, try the last single token; failing that, propose nothing (the
pass is then an ordinary one). Text repeats itself — names, scaffolding such as
" The capital of", the sentence being rewritten — so the copy is often right.

Reference: Saxena, "Prompt Lookup Decoding" (2023),
github.com/apoorvumang/prompt-lookup-decoding. The lesson's rule differs from
the common implementations: Hugging Face transformers
(``PromptLookupCandidateGenerator``) and vLLM's n-gram proposer take the
*earliest* match and draft 10 tokens by default; we take the most recent match,
which tends to sit in the passage being continued, and draft 6.
"""

NGRAM_SIZES = (2, 1)  # the longest n-gram is tried first
MAX_DRAFT = 6
MAX_AGREEMENT = 32  # how far back ``best_match`` compares a match's context with the text's


def prompt_lookup(text: list[int], ngram_sizes: tuple[int, ...] = NGRAM_SIZES, max_draft: int = MAX_DRAFT) -> list[int]:
    """The tokens that followed the most recent earlier occurrence of ``text``'s last n tokens."""
    return copied(text, lookup_match(text, ngram_sizes), max_draft)


def copied(text: list[int], found: tuple[int, int] | None, max_draft: int = MAX_DRAFT) -> list[int]:
    """The draft a match gives: up to ``max_draft`` tokens after the n-gram at ``found`` = (n, start); [] for none."""
    if found is None:
        return []
    n, start = found
    return text[start + n:start + n + max_draft]


def shown(text: list[int], found: tuple[int, int] | None) -> dict | None:
    """A match as the pages draw it (``contract.Match``: the n-gram, n, where it starts), or None for none."""
    if found is None:
        return None
    n, start = found
    return {"n": n, "at": start, "ngram": text[start:start + n]}


def lookup_match(text: list[int], ngram_sizes: tuple[int, ...] = NGRAM_SIZES) -> tuple[int, int] | None:
    """The n-gram size and the position of the match prompt lookup copies from, or None (no draft)."""
    for n in ngram_sizes:
        start = most_recent_match(text, n)
        if start is not None:
            return n, start
    return None


def most_recent_match(text: list[int], n: int) -> int | None:
    """Where the last ``n`` tokens occurred before, latest first, or None."""
    if n < 1 or len(text) <= n:
        return None
    tail = text[-n:]
    # Start below len(text) - n: the trailing n-gram itself always matches, and nothing follows it yet.
    for start in range(len(text) - n - 1, -1, -1):
        if text[start:start + n] == tail:
            return start
    return None


def best_match(text: list[int], n: int, longest: int = MAX_AGREEMENT) -> tuple[int, int, int] | None:
    """Among the earlier occurrences of ``text``'s last ``n`` tokens, the one whose context agrees with the text's
    furthest back (up to ``longest`` tokens, the n-gram included; the most recent on ties): ``(n, start, agreed)``,
    or None. How far it agrees is the copy's confidence (SuffixDecoding scores its matches by their length)."""
    best = None
    for start in range(len(text) - n - 1, -1, -1):
        if text[start:start + n] != text[-n:]:
            continue
        agreed = n
        # Compare backwards from the token before the n-gram: text[start + n - 1 - k] against text[-1 - k].
        while agreed < longest and start + n - 1 - agreed >= 0 and text[start + n - 1 - agreed] == text[-1 - agreed]:
            agreed += 1
        if best is None or agreed > best[2]:
            best = (n, start, agreed)
    return best
