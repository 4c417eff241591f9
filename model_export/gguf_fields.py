"""A GGUF's metadata (its key-value section), read in one sweep.

gguf-py's ``GGUFReader`` makes a numpy view of every element it reads: about 15 s for Qwen's 151,936 tokens and
their merges, and the export used to open the file that way once itself and twice more through transformers'
tokenizer. This reads the same section with ``struct`` in well under a second; transformers still opens the file
for the model's weights and once for the tokenizer it builds.

Reference: the GGUF file format, github.com/ggml-org/ggml/blob/master/docs/gguf.md.
"""

import mmap
import struct
from pathlib import Path

from .loaded import SourceError

# GGUF value types (gguf.GGUFValueType): the struct format of each fixed-size one; 8 is a string, 9 an array.
FORMATS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
SIZES = {value_type: struct.calcsize("<" + code) for value_type, code in FORMATS.items()}
STRING, ARRAY = 8, 9


def read_fields(path: Path | str) -> dict:
    """Every key and value of the GGUF at ``path``: scalars as Python values, arrays as lists, strings decoded.
    Like ``GGUFReader.fields``, it also holds ``GGUF.version``, ``GGUF.tensor_count`` and ``GGUF.kv_count``."""
    with open(path, "rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if data[:4] != b"GGUF":
            raise SourceError(f"{Path(path).name} is not a GGUF")
        version, tensor_count, kv_count = struct.unpack_from("<IQQ", data, 4)
        if version not in (2, 3):
            raise SourceError(f"{Path(path).name} is a GGUF of version {version}: only 2 and 3 are read")
        fields = {"GGUF.version": version, "GGUF.tensor_count": tensor_count, "GGUF.kv_count": kv_count}
        at = 24
        try:
            for _ in range(kv_count):
                key, at = _string(data, at)
                (value_type,), at = struct.unpack_from("<I", data, at), at + 4
                fields[key], at = _value(data, at, value_type)
        except (struct.error, UnicodeDecodeError, IndexError) as why:
            raise SourceError(f"{Path(path).name}: its metadata cannot be read ({why})") from None
        return fields


def _string(data, at: int) -> tuple[str, int]:
    (length,) = struct.unpack_from("<Q", data, at)
    end = at + 8 + length
    if end > len(data):
        raise IndexError("a string runs past the end of the file")
    return data[at + 8:end].decode("utf-8"), end


def _value(data, at: int, value_type: int):
    if value_type == STRING:
        return _string(data, at)
    if value_type == ARRAY:
        item_type, count = struct.unpack_from("<IQ", data, at)
        at += 12
        if item_type in FORMATS:
            return list(struct.unpack_from(f"<{count}{FORMATS[item_type]}", data, at)), at + count * SIZES[item_type]
        items = []
        for _ in range(count):
            item, at = _value(data, at, item_type)
            items.append(item)
        return items, at
    if value_type not in FORMATS:
        raise SourceError(f"unknown GGUF value type {value_type}")
    return struct.unpack_from("<" + FORMATS[value_type], data, at)[0], at + SIZES[value_type]
