"""The worker's tokenizer equals the `tokenizers` library, and streamed decoding never shows half a character."""

from tokenizers import Tokenizer

from tests.browser import load_runtime
from tests.test_tokenizer import VARIED_TEXTS

pytest_plugins = ["tests.browser"]  # the browser fixtures, registered once for the whole session

REPLACEMENT = "\ufffd"


def test_encoding_matches_the_tokenizers_library(page, tiny_server, tiny_export):
    reference = Tokenizer.from_file(str(tiny_export / "tokenizer.json"))
    load_runtime(page, tiny_server.url)
    ours = page.evaluate("(texts) => window.onepass().tokenize(texts)", VARIED_TEXTS)
    for text, ids in zip(VARIED_TEXTS, ours):
        assert ids == reference.encode(text, add_special_tokens=False).ids, text


def test_streamed_decoding_holds_back_partial_characters(page, tiny_server, tiny_export):
    reference = Tokenizer.from_file(str(tiny_export / "tokenizer.json"))
    load_runtime(page, tiny_server.url)
    split_characters = 0
    for text in VARIED_TEXTS:
        ids = reference.encode(text, add_special_tokens=False).ids
        decoded = page.evaluate("(ids) => window.onepass().decode(ids)", ids)
        assert decoded["text"] == reference.decode(ids, skip_special_tokens=False)
        assert "".join(decoded["pieces"]) == decoded["text"]
        assert not any(REPLACEMENT in piece for piece in decoded["pieces"]), text
        split_characters += decoded["pieces"].count("")
    assert split_characters > 0  # some characters (emoji, CJK) do span several tokens
    # Ids from all over the vocabulary and every added token: the decoder works out an id's bytes when it is first
    # asked for them (runtime/decoder.js); the whole vocabulary at once took 5 s more, most of it Python's streaming.
    size = reference.get_vocab_size(with_added_tokens=True)
    spread = list(range(0, size, 41)) + list(range(size - 30, size))
    assert page.evaluate("(ids) => window.onepass().decode(ids)", spread)["text"] == reference.decode(
        spread, skip_special_tokens=False)


def test_every_prefix_shows_exactly_the_complete_characters(page, tiny_server, tiny_export):
    reference = Tokenizer.from_file(str(tiny_export / "tokenizer.json"))
    load_runtime(page, tiny_server.url)
    text = "🇫🇷 👍🏽 東京 e\u0301 ∑ 🙂"
    ids = reference.encode(text, add_special_tokens=False).ids
    # Some tokens here are only part of a character: decoded alone they are not valid UTF-8.
    assert any(REPLACEMENT in reference.decode([token]) for token in ids)
    pieces = page.evaluate("(ids) => window.onepass().decode(ids)", ids)["pieces"]
    for i in range(len(ids)):
        assert "".join(pieces[:i + 1]) == reference.decode(ids[:i + 1]).rstrip(REPLACEMENT)
