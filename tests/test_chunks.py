"""hooks/model.py's chunks: pieces of at most the limit, none starting with gzip's magic bytes, each compressed and
named after what it decompresses to."""

import gzip
import hashlib

import pytest

from hooks.model import GZIP_MAGIC, pieces, write_chunks


def test_no_piece_but_the_first_starts_with_gzip_s_magic_bytes():
    data = b"ab" + GZIP_MAGIC + b"cd" + GZIP_MAGIC + b"x" * 9
    for limit in (2, 3, 4, 5, 100):
        cut = list(pieces(data, limit))
        assert b"".join(cut) == data and all(0 < len(piece) <= limit for piece in cut)
        assert not any(piece.startswith(GZIP_MAGIC) for piece in cut), (limit, cut)
    with pytest.raises(ValueError, match="magic"):
        list(pieces(GZIP_MAGIC + b"rest", 4))


def test_chunks_are_gzip_named_after_their_uncompressed_bytes(tmp_path):
    source = tmp_path / "model.bin"
    source.write_bytes(bytes(range(256)) * 1000 + b"\x1f\x8b" + b"tail" * 100)
    chunks = write_chunks(source, tmp_path / "site", 1 << 16)
    joined = b""
    for chunk in chunks:
        plain = gzip.decompress((tmp_path / "site" / chunk["name"]).read_bytes())
        assert chunk["name"] == f"chunks/{hashlib.sha256(plain).hexdigest()}.gz" and len(plain) == chunk["size"]
        assert (tmp_path / "site" / chunk["name"]).stat().st_size == chunk["download_size"]
        joined += plain
    assert joined == source.read_bytes()
    # The same piece gives the same bytes in every build (no time in the gzip header).
    again = write_chunks(source, tmp_path / "again", 1 << 16)
    assert [(tmp_path / "again" / c["name"]).read_bytes() for c in again] == \
        [(tmp_path / "site" / c["name"]).read_bytes() for c in chunks]
