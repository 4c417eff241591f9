"""MkDocs build hook: ship the exported model with the site, in chunks, and name it on the pages.

``ONEPASS_MODEL_DIR`` points at an export (``python -m model_export`` prints
it). Its manifest fills the ``{{ model.* }}`` placeholders in the Markdown, so
no page hard-codes the model. Its served files go to ``site/model/chunks/``
split into chunks of at most ``ONEPASS_CHUNK_MB`` (default 50 MB, what common
static hosts accept per file). Each chunk is named after its own sha256, so a
name never changes meaning: browsers and CDNs may keep it forever, a new build
never meets a stale chunk under an old name, and chunks a new build shares
with the old one are not fetched again. The site's ``manifest.json`` is the
export's, plus a ``chunks`` list per file (name, size, sha256) that the
browser fetches, checks and caches one by one.
"""

import hashlib
import json
import os
import re
import shutil
from pathlib import Path

_PLACEHOLDER = re.compile(r"\{\{\s*model\.(\w+)\s*\}\}")
DEFAULT_CHUNK_MB = 50


def _manifest() -> dict | None:
    folder = os.environ.get("ONEPASS_MODEL_DIR")
    return json.loads((Path(folder) / "manifest.json").read_text()) if folder else None


def _facts(manifest: dict | None) -> dict:
    if manifest is None:
        return {"name": "(no model built)", "size_mb": "?", "quantisation": "?", "source": "?", "layers": "?",
                "parameters": "?"}
    size = sum(f["size"] for f in manifest["files"])
    return {
        "name": manifest["model"]["name"],
        "size_mb": f"{size / 1e6:.0f}",
        "quantisation": manifest["quantisation"]["name"],
        "source": manifest["model"]["source"],
        "layers": str(manifest["model"]["num_layers"]),
        "parameters": f"{manifest['model']['parameters'] / 1e6:.0f} million",
    }


def chunk_bytes() -> int:
    return int(float(os.environ.get("ONEPASS_CHUNK_MB", DEFAULT_CHUNK_MB)) * 1_000_000)


CHUNK_FOLDER = "chunks"


def write_chunks(source: Path, target: Path, limit: int) -> list[dict]:
    """Split ``source`` into files of at most ``limit`` bytes under ``target/chunks/``, each named after its
    sha256; return their names (relative to ``target``), sizes and hashes, in order."""
    (target / CHUNK_FOLDER).mkdir(parents=True, exist_ok=True)
    size = source.stat().st_size
    chunks = []
    with source.open("rb") as whole:
        for _ in range(max(1, -(-size // limit))):
            data = whole.read(limit)
            digest = hashlib.sha256(data).hexdigest()
            name = f"{CHUNK_FOLDER}/{digest}.bin"
            (target / name).write_bytes(data)
            chunks.append({"name": name, "size": len(data), "sha256": digest})
    return chunks


def on_config(config):
    # Read the manifest once per build, not once per page.
    config["extra"]["model_facts"] = _facts(_manifest())
    return config


def on_page_markdown(markdown, page, config, files):
    facts = config["extra"]["model_facts"]
    return _PLACEHOLDER.sub(lambda match: facts.get(match.group(1), match.group(0)), markdown)


def on_post_build(config):
    folder = os.environ.get("ONEPASS_MODEL_DIR")
    if not folder:
        return
    target = Path(config["site_dir"]) / "model"
    # A rebuild into the same folder must not leave the old model's chunks behind.
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    manifest = _manifest()
    limit = chunk_bytes()
    for entry in manifest["files"]:
        entry["chunks"] = write_chunks(Path(folder) / entry["name"], target, limit)
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
