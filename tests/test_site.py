"""The site builds strictly, ships the export it was built with, and names that model."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_site_ships_and_names_the_model(tiny_export, tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "ONEPASS_MODEL_DIR": str(tiny_export), "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
                   cwd=ROOT, env=env, check=True)
    manifest = json.loads((tiny_export / "manifest.json").read_text())
    for entry in manifest["files"]:
        assert (site / "model" / entry["name"]).stat().st_size == entry["size"]
    home = (site / "index.html").read_text()
    assert manifest["model"]["name"] in home
    assert "{{" not in home
