"""hooks/model.py's chunks: pieces of at most the limit, none starting with zstd's magic bytes, each compressed and
named after what it decompresses to."""

import hashlib
import json
import os
import random

import pytest
import zstandard

from hooks.model import PACKING, ZSTD_MAGIC, _prune, compress, decompress, pieces, write_chunks


def test_no_piece_but_the_first_starts_with_zstd_s_magic_bytes():
    data = b"ab" + ZSTD_MAGIC + b"cd" + ZSTD_MAGIC + ZSTD_MAGIC + b"x" * 9
    for limit in range(4, 30):
        cut = list(pieces(data, limit))
        assert b"".join(cut) == data and all(0 < len(piece) <= limit for piece in cut)
        assert not any(piece.startswith(ZSTD_MAGIC) for piece in cut), (limit, cut)
    with pytest.raises(ValueError, match="magic"):
        list(pieces(ZSTD_MAGIC + b"rest", 8))


def test_chunks_are_zstd_named_after_their_uncompressed_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "model.bin"
    source.write_bytes(bytes(range(256)) * 1000 + ZSTD_MAGIC + b"tail" * 100)
    chunks = write_chunks(source, tmp_path / "site", 1 << 16)
    joined = b""
    for chunk in chunks:
        plain = decompress((tmp_path / "site" / chunk["name"]).read_bytes())
        assert chunk["name"] == f"chunks/{hashlib.sha256(plain).hexdigest()}.zst" and len(plain) == chunk["size"]
        assert (tmp_path / "site" / chunk["name"]).stat().st_size == chunk["download_size"]
        joined += plain
    assert joined == source.read_bytes()
    # The same piece gives the same bytes in every build, compressed afresh.
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "another cache"))
    again = write_chunks(source, tmp_path / "again", 1 << 16)
    assert [(tmp_path / "again" / c["name"]).read_bytes() for c in again] == \
        [(tmp_path / "site" / c["name"]).read_bytes() for c in chunks]


def test_a_build_takes_its_compressed_pieces_from_the_cache_only_when_they_hold_the_piece(tmp_path, monkeypatch):
    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "model.bin"
    source.write_bytes(random.Random(0).randbytes(200_000))  # no piece like another
    first = write_chunks(source, tmp_path / "one", 1 << 16)
    kept = {path.name.removesuffix(f".{PACKING}"): path for path in (tmp_path / "cache" / "chunks").iterdir()}
    assert sorted(kept) == sorted(chunk["sha256"] for chunk in first)
    # A kept piece is what the build ships; one that does not decompress to its name's bytes is made again.
    marked = zstandard.ZstdCompressor(level=1).compress(source.read_bytes()[:first[0]["size"]])
    kept[first[0]["sha256"]].write_bytes(marked)
    kept[first[1]["sha256"]].write_bytes(b"not zstd")
    second = write_chunks(source, tmp_path / "two", 1 << 16)
    assert (tmp_path / "two" / second[0]["name"]).read_bytes() == marked
    assert (tmp_path / "two" / second[1]["name"]).read_bytes() == (tmp_path / "one" / first[1]["name"]).read_bytes()
    assert not list((tmp_path / "cache" / "chunks").glob("*.partial"))


def test_the_cache_keeps_the_most_recently_used_pieces_within_its_bytes(tmp_path):
    folder = tmp_path / "chunks"
    folder.mkdir()
    for age, name in enumerate(("new", "middle", "old")):
        path = folder / f"{name}.{PACKING}"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1e9 - age, 1e9 - age))
    (folder / "earlier.gz9").write_bytes(b"x")  # an earlier build's gzip-compressed piece
    (folder / "writing.partial").write_bytes(b"x")  # a piece another build is writing
    _prune(folder, 250)
    assert sorted(path.name for path in folder.iterdir()) == [f"middle.{PACKING}", f"new.{PACKING}", "writing.partial"]


def test_text_is_compressed_harder_than_the_model_s_weights():
    weights = bytes(random.Random(1).choices(range(256), weights=[1 + min(b, 255 - b) for b in range(256)], k=200_000))
    draw = random.Random(0)
    text = json.dumps([[draw.randrange(150_000), draw.choice(["def", "class", "return", "self"])] for _ in range(20_000)]).encode()
    assert decompress(compress(weights)) == weights and decompress(compress(text)) == text
    assert len(compress(text)) < len(zstandard.ZstdCompressor(level=3).compress(text))
    assert compress(weights) == zstandard.ZstdCompressor(level=3).compress(weights)


def test_the_graph_shift_starts_the_most_weight_bytes_on_a_16_byte_boundary(tiny_export):
    """hooks/model.py's graph_shift over the tiny export's model.ort: counted by hand from the file's initializers."""
    from onnxruntime.tools.ort_format_model.ort_flatbuffers_py.fbs import InferenceSession

    from hooks.model import ALIGNED_FROM, ALIGNMENT, graph_shift

    path = tiny_export / "model.ort"
    alignment = graph_shift(path)
    graph = InferenceSession.InferenceSession.GetRootAs(path.read_bytes(), 0).Model().Graph()
    weights = [graph.Initializers(i) for i in range(graph.InitializersLength())]
    starts = {tensor._tab.Vector(tensor._tab.Offset(12)): tensor.RawDataLength() for tensor in weights
              if tensor.RawDataLength() >= ALIGNED_FROM}
    aligned = [sum(size for start, size in starts.items() if (start + shift) % ALIGNMENT == 0) for shift in range(ALIGNMENT)]
    assert aligned[alignment["shift"]] == max(aligned) > 0
    assert alignment["aligned"] == round(max(aligned) / sum(starts.values()), 3)
    assert graph_shift(tiny_export / "model.onnx") == {"shift": 0, "aligned": 0.0}


def test_the_exporter_starts_every_large_weight_at_one_offset(tiny_export):
    """model_export/ort_format.py names each value that becomes an initializer so that its data lands 4 or 8 bytes
    from a 16-byte boundary (counted from the file's end) wherever the hash of the names puts it: the layout model it
    uses predicts every step of the file, and every large weight of the tiny export shares one offset."""
    from hooks.model import ALIGNED_FROM, ALIGNMENT, graph_shift
    from model_export.ort_format import _landing, initializers

    path = tiny_export / "model.ort"
    total = path.stat().st_size
    found = sorted(((start, name, dims, size) for name, (dims, size, start) in initializers(path).items()), reverse=True)
    assert len(found) > 50
    # The first step also holds the tensors' one shared vtable.
    for (start, *_), (next_start, name, dims, size) in zip(found[1:], found[2:]):
        assert _landing(total - start, len(name), dims, size) == (total - next_start) % ALIGNMENT, name
    assert len({(total - start) % ALIGNMENT for start, _, _, size in found if size >= ALIGNED_FROM}) == 1
    assert graph_shift(path)["aligned"] == 1.0
