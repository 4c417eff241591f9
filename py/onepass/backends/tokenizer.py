"""The export's tokenizer natively, via Hugging Face ``tokenizers``.

Kept apart from the algorithms, which see only token ids: in the browser a
JavaScript tokenizer reads the same ``tokenizer.json``.
"""

from pathlib import Path

from tokenizers import Tokenizer


class NativeTokenizer:
    def __init__(self, folder: Path | str):
        self.tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))

    def encode(self, text: str) -> list[int]:
        # Qwen adds no beginning-of-text token; chat markers such as <|im_start|> are read as their special ids.
        return self.tokenizer.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def pieces(self, ids: list[int]) -> list[str]:
        """Each token's own text, for showing tokens one by one."""
        return [self.decode([token]) for token in ids]
