"""MkDocs build hook: ship the exported model with the site and name it on the pages.

``ONEPASS_MODEL_DIR`` points at an export (``python -m model_export`` prints
it). Its served files are copied to ``site/model/`` and its manifest fills the
``{{ model.* }}`` placeholders in the Markdown, so no page hard-codes the model.
"""

import json
import os
import re
import shutil
from pathlib import Path

_PLACEHOLDER = re.compile(r"\{\{\s*model\.(\w+)\s*\}\}")


def _manifest() -> dict | None:
    folder = os.environ.get("ONEPASS_MODEL_DIR")
    return json.loads((Path(folder) / "manifest.json").read_text()) if folder else None


def _facts(manifest: dict | None) -> dict:
    if manifest is None:
        return {"name": "(no model built)", "size_mb": "?", "quantisation": "?", "source": "?", "layers": "?"}
    size = sum(f["size"] for f in manifest["files"])
    return {
        "name": manifest["model"]["name"],
        "size_mb": f"{size / 1e6:.0f}",
        "quantisation": manifest["quantisation"]["name"],
        "source": manifest["model"]["source"],
        "layers": str(manifest["model"]["num_layers"]),
    }


def on_page_markdown(markdown, page, config, files):
    facts = _facts(_manifest())
    return _PLACEHOLDER.sub(lambda match: facts.get(match.group(1), match.group(0)), markdown)


def on_post_build(config):
    folder = os.environ.get("ONEPASS_MODEL_DIR")
    if not folder:
        return
    target = Path(config["site_dir"]) / "model"
    target.mkdir(parents=True, exist_ok=True)
    manifest = _manifest()
    for name in [f["name"] for f in manifest["files"]] + ["manifest.json"]:
        shutil.copy2(Path(folder) / name, target / name)
