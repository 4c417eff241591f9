"""hooks/model.py's chunks: pieces of at most the limit, none starting with gzip's magic bytes, each compressed and
named after what it decompresses to."""

import gzip
import hashlib
import os
import random

import pytest

from hooks.model import GZIP_LEVEL, GZIP_MAGIC, _prune, pieces, write_chunks


def test_no_piece_but_the_first_starts_with_gzip_s_magic_bytes():
    data = b"ab" + GZIP_MAGIC + b"cd" + GZIP_MAGIC + b"x" * 9
    for limit in (2, 3, 4, 5, 100):
        cut = list(pieces(data, limit))
        assert b"".join(cut) == data and all(0 < len(piece) <= limit for piece in cut)
        assert not any(piece.startswith(GZIP_MAGIC) for piece in cut), (limit, cut)
    with pytest.raises(ValueError, match="magic"):
        list(pieces(GZIP_MAGIC + b"rest", 4))


def test_chunks_are_gzip_named_after_their_uncompressed_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "cache"))
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
    # The same piece gives the same bytes in every build (no time in the gzip header), compressed afresh.
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "another cache"))
    again = write_chunks(source, tmp_path / "again", 1 << 16)
    assert [(tmp_path / "again" / c["name"]).read_bytes() for c in again] == \
        [(tmp_path / "site" / c["name"]).read_bytes() for c in chunks]


def test_a_build_takes_its_compressed_pieces_from_the_cache_only_when_they_hold_the_piece(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "model.bin"
    source.write_bytes(random.Random(0).randbytes(200_000))  # no piece like another
    first = write_chunks(source, tmp_path / "one", 1 << 16)
    kept = {path.name.removesuffix(f".gz{GZIP_LEVEL}"): path for path in (tmp_path / "cache" / "chunks").iterdir()}
    assert sorted(kept) == sorted(chunk["sha256"] for chunk in first)
    # A kept piece is what the build ships; one that does not decompress to its name's bytes is made again.
    marked = gzip.compress(source.read_bytes()[:first[0]["size"]], compresslevel=1, mtime=0)
    kept[first[0]["sha256"]].write_bytes(marked)
    kept[first[1]["sha256"]].write_bytes(b"not gzip")
    second = write_chunks(source, tmp_path / "two", 1 << 16)
    assert (tmp_path / "two" / second[0]["name"]).read_bytes() == marked
    assert (tmp_path / "two" / second[1]["name"]).read_bytes() == (tmp_path / "one" / first[1]["name"]).read_bytes()
    assert not list((tmp_path / "cache" / "chunks").glob("*.partial"))


def test_the_cache_keeps_the_most_recently_used_pieces_within_its_bytes(tmp_path):
    folder = tmp_path / "chunks"
    folder.mkdir()
    for age, name in enumerate(("new", "middle", "old")):
        path = folder / f"{name}.gz{GZIP_LEVEL}"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1e9 - age, 1e9 - age))
    _prune(folder, 250)
    assert sorted(path.name for path in folder.iterdir()) == [f"middle.gz{GZIP_LEVEL}", f"new.gz{GZIP_LEVEL}"]
