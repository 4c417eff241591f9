"""The target's own answers as a table to copy from: after these 2, 3 or 4 tokens, the target wrote this one.

Retrieval drafting (He et al., "REST: Retrieval-Based Speculative Decoding", 2023) looks the text's last tokens up
in a store of earlier texts and proposes what followed them there. Here the store is the draft's own training
answers (``data.py``'s ``chat`` and ``library``: the target's greedy answers, so what followed is what the target
writes), and only its confident rows are kept: contexts seen at least ``MIN_COUNT`` times, whose most frequent next
token took at least ``MIN_SHARE`` of them. ``onepass.answers.Answers`` reads the table (longest context first) in
the drafted loop; verification keeps the text exact whatever it proposes. Simulated over the held-out answers with
the draft, the pass costs of the tab and copying from the text first, it added about 5 % to the tokens a unit of
time gives (benchmarks/FINDINGS.md, "Copying from the target's own answers").
"""

from collections import Counter, defaultdict

from .data import Sequences

ORDERS = (2, 3, 4)  # context lengths kept; the reader tries the longest first
MIN_COUNT = 2  # a context seen once says nothing about how often it continues the same way
MIN_SHARE = 0.7
KINDS = ("chat", "library")  # the target's own answers (the teacher-forced texts are people's, not the target's)


def table(data: Sequences, orders=ORDERS, min_count: int = MIN_COUNT, min_share: float = MIN_SHARE) -> dict:
    """``{"orders", "min_count", "min_share", "sources", "rows": {order: [[context..., next], ...]}}``, rows sorted."""
    texts = [(ids.tolist(), choices.tolist(), start)
             for ids, choices, kind, start in zip(data.ids, data.argmax, data.kinds, data.starts) if kind in KINDS]
    return _table(texts, orders, min_count, min_share)


def table_of_texts(texts, orders=ORDERS, min_count: int = MIN_COUNT, min_share: float = MIN_SHARE) -> dict:
    """``table`` over the corpus's (ids, start) texts (``corpus.py``): each is the target's greedy answer, so its
    choice after every position of the answer is the token that follows there."""
    texts = [([int(i) for i in ids], start) for ids, start in texts]
    return _table([(ids, [*ids[1:], -1], start) for ids, start in texts], orders, min_count, min_share)


def _table(texts, orders, min_count: int, min_share: float) -> dict:
    seen = {n: defaultdict(Counter) for n in orders}
    for ids, choices, start in texts:
        # From the prompt's last token on: choices[t] is the target's next token after ids[: t + 1].
        for t in range(max(start - 1, 0), len(ids) - 1):
            for n in orders:
                if t + 1 >= n:
                    seen[n][tuple(ids[t + 1 - n:t + 1])][choices[t]] += 1
    rows = {}
    for n, contexts in seen.items():
        kept = []
        for context, nexts in contexts.items():
            total = sum(nexts.values())
            # Ties go to the lowest id, so the table does not depend on the order the data came in.
            token, count = min(nexts.items(), key=lambda item: (-item[1], item[0]))
            if total >= min_count and count >= min_share * total:
                kept.append([*context, token])
        rows[str(n)] = sorted(kept)
    return {"orders": sorted(orders, reverse=True), "min_count": min_count, "min_share": min_share,
            "sources": list(KINDS), "rows": rows}
