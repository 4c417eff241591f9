"""The exported tokenizer.json: complete, faithful to the source, and lossless on varied text."""

import unicodedata

import pytest
from tokenizers import Tokenizer

from tests.conftest import manifest_of

pytestmark = pytest.mark.slow  # the reference tokenizer takes half a minute to build the first time

VARIED_TEXTS = [
    "The capital of France is Paris.",
    "  leading spaces, trailing spaces  \n\n\ttabs\r\nand CRLF",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "if (x != 0 && y >= 1e-9) { printf(\"%d\\n\", x << 2); }",
    "東京は日本の首都です。北京是中国的首都。서울은 한국의 수도입니다.",
    "Emoji: 🙂 👍🏽 👩‍👩‍👧 🇫🇷 and a flag.",
    "Combining marks: e\u0301 a\u0308 n\u0303, Zalgo: Z\u0351\u0315a\u0336l\u0353g\u0327o",
    "Arabic: مرحبا بالعالم — Hebrew: שלום עולם",
    "Numbers 1234567890, 3.14159, -42, 1e10, 0xFF",
    "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n",
    "<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>",
    "<tool_call>{\"name\": \"x\"}</tool_call><|endoftext|>",
    "don't can't I'm we'll they've it's",
    "",
    " ",
]


@pytest.fixture(scope="module")
def reference(gguf_tokenizer):
    """The transformers tokenizer built from the pinned GGUF, with its special tokens registered."""
    return gguf_tokenizer


@pytest.fixture(scope="module")
def exported(tiny_export):
    return Tokenizer.from_file(str(tiny_export / "tokenizer.json"))


@pytest.mark.parametrize("text", VARIED_TEXTS)
def test_tokenizer_json_equals_the_reference(exported, reference, text):
    assert exported.encode(text).ids == reference.encode(text)


@pytest.mark.parametrize("text", VARIED_TEXTS)
def test_round_trip_is_lossless(exported, text):
    ids = exported.encode(text).ids
    assert exported.decode(ids, skip_special_tokens=False) == unicodedata.normalize("NFC", text)


def test_known_qwen_ids(exported):
    assert exported.encode("Hello world").ids == [9707, 1879]
    assert exported.encode("<|im_start|>user").ids == [151644, 872]


def test_every_special_token_is_one_id(exported, tiny_export):
    for content, token_id in manifest_of(tiny_export)["special_ids"].items():
        assert exported.encode(f"a{content}b").ids[1] == token_id
        assert exported.encode(content).ids == [token_id]


def test_all_exports_ship_the_same_tokenizer(tiny_export, real_export):
    assert (tiny_export / "tokenizer.json").read_bytes() == (real_export / "tokenizer.json").read_bytes()
