"""The tokenizer that ships with an export, as one ``tokenizer.json``.

transformers builds a tokenizer from a GGUF's vocabulary, but registers only
three of Qwen's special tokens as added tokens: the other control tokens
(ids 151646-151664, e.g. ``<|fim_prefix|>``) sit in the vocabulary unprotected,
so their text is split into pieces like ``<``, ``|``, ``fim``. The GGUF marks
them by token type, so we register every control and user-defined token.
"""

import hashlib
from pathlib import Path

from .gguf_fields import read_fields

# llama.cpp's token types (gguf.TokenType): CONTROL tokens are special, USER_DEFINED are not.
_CONTROL, _USER_DEFINED = 3, 4
# Qwen ends a turn with <|im_end|> and a document with <|endoftext|>; both stop generation.
_END_TOKENS = ("<|endoftext|>", "<|im_end|>")


def tokenizer_from_gguf(path: Path, fields: dict | None = None):
    """The GGUF's tokenizer with every control token registered; ``fields``: its ``gguf_fields.read_fields``, if
    read already."""
    from tokenizers import AddedToken

    fields = fields or read_fields(path)
    tokenizer = _tokenizer_class(fields["general.architecture"]).from_pretrained(str(path.parent), gguf_file=path.name)
    registered = set(tokenizer.added_tokens_decoder)
    added = []
    for token_id, (content, token_type) in enumerate(zip(fields["tokenizer.ggml.tokens"],
                                                         fields["tokenizer.ggml.token_type"])):
        if token_type in (_CONTROL, _USER_DEFINED) and token_id not in registered:
            added.append((token_id, AddedToken(content, special=token_type == _CONTROL, normalized=False)))
    for token_id, token in added:
        tokenizer.add_tokens([token], special_tokens=token.special)
        if tokenizer.convert_tokens_to_ids(token.content) != token_id:
            raise RuntimeError(f"registering {token.content!r} moved it away from id {token_id}")
    return tokenizer


def _tokenizer_class(architecture: str):
    """The class AutoTokenizer would choose for a GGUF of ``architecture``: chosen here, AutoTokenizer would open
    the GGUF once more (seconds) only to read its architecture."""
    from transformers import AutoTokenizer
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING_NAMES, tokenizer_class_from_name

    names = TOKENIZER_MAPPING_NAMES.get(architecture)
    return tokenizer_class_from_name(names[1]) if names and names[1] else AutoTokenizer


def cached_tokenizer_from_gguf(path: Path):
    """``tokenizer_from_gguf``, kept on disk beside the GGUF: building it takes about 15 s."""
    from transformers import PreTrainedTokenizerFast

    version = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    cached = path.with_name(f"{path.stem}.tokenizer-{version}.json")
    if not cached.is_file():
        partial = cached.with_suffix(".partial")
        save_tokenizer_json(tokenizer_from_gguf(path), partial)
        partial.rename(cached)
    return PreTrainedTokenizerFast(tokenizer_file=str(cached))


def end_of_text_ids(tokenizer, model) -> list[int]:
    """Every id that ends generation: the configs' eos ids and Qwen's two end tokens."""
    ids = set()
    for value in (tokenizer.eos_token_id, model.config.eos_token_id, getattr(model.generation_config, "eos_token_id", None)):
        ids.update(value if isinstance(value, list) else [value] if value is not None else [])
    vocab = tokenizer.get_vocab()
    ids.update(vocab[token] for token in _END_TOKENS if token in vocab)
    return sorted(ids)


def special_ids(tokenizer) -> dict:
    return {token.content: token_id for token_id, token in sorted(tokenizer.added_tokens_decoder.items()) if token.special}


def save_tokenizer_json(tokenizer, path: Path) -> None:
    tokenizer.backend_tokenizer.save(str(path))
