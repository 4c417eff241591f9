"""The site builds strictly, ships the export it was built with, names that model, and has every nav page."""

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hooks.model import decompress, megabytes, millions
from model_export.cache import sha256_file

pytestmark = pytest.mark.slow  # the site is built

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tiny_export, tmp_path_factory):
    site = tmp_path_factory.mktemp("strict") / "site"
    env = {**os.environ, "ONEPASS_MODEL_DIR": str(tiny_export), "ONEPASS_DRAFT_DIR": "", "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
                   cwd=ROOT, env=env, check=True)
    return site


def test_site_ships_and_names_the_model(site, tiny_export):
    manifest = json.loads((tiny_export / "manifest.json").read_text())
    shipped = json.loads((site / "model" / "manifest.json").read_text())
    for entry, listed in zip(manifest["files"], shipped["files"]):
        # Each file arrives as zstd-compressed chunks named after the sha256 of what they decompress to; decompressed
        # and joined, they are the export's file.
        whole = b"".join(decompress((site / "model" / chunk["name"]).read_bytes()) for chunk in listed["chunks"])
        assert all(chunk["name"] == f"chunks/{chunk['sha256']}.zst" for chunk in listed["chunks"])
        assert hashlib.sha256(whole).hexdigest() == entry["sha256"]
    home = (site / "index.html").read_text()
    assert manifest["model"]["name"] in home
    assert "{{" not in home


def test_every_nav_page_is_built_with_its_title_and_no_placeholder(site):
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"]
    assert len(nav) == 9
    for entry in nav:
        (title, source), = entry.items()
        page = site / ("index.html" if source == "index.md" else f"{source.removesuffix('.md')}/index.html")
        html = page.read_text()
        assert f"<title>{title} - One token per pass</title>" in html or title == "One token per pass"
        assert "{{" not in html, f"{source} has an unfilled placeholder"


def test_no_page_points_outside_the_site_for_scripts_styles_or_fonts(site):
    for page in site.rglob("*.html"):
        html = page.read_text()
        for marker in ('src="http', "src='http", 'href="https://fonts', "cdn.jsdelivr", "unpkg.com", "cdnjs"):
            assert marker not in html, f"{page.relative_to(site)} loads {marker!r} from outside the site"


def test_the_pages_split_the_parameters_as_the_manifest_implies(site, tiny_export):
    model = json.loads((tiny_export / "manifest.json").read_text())
    table = model["vocab_size"] * model["model"]["hidden_size"]
    assert model["model"]["tied_embeddings"]  # the test model, like the default one, has one word table
    layers = model["model"]["parameters"] - table
    hood = (site / "runtime" / "index.html").read_text()
    assert f"layers\n({layers:,})" in hood and f"{model['vocab_size']:,} tokens" in hood
    assert "The same table also turns each token the model reads into numbers" in hood
    # Step 2 quotes what a pass reads, from the same manifest: the layers and the output table.
    step2 = (site / "one-at-a-time" / "index.html").read_text()
    assert f"{millions(layers + table)}\nhere" in step2


def test_recorded_runs_say_where_and_when_they_were_recorded(site):
    traces = json.loads((site / "model" / "traces.json").read_text())["traces"]
    for trace in traces.values():
        stamp = trace["recorded"]
        assert stamp["machine"] and stamp["threads"] >= 1 and len(stamp["date"]) == 10


def test_python_s_snapshot_is_named_by_its_content_and_holds_no_build_path(site):
    runtime = json.loads((site / "vendor" / "runtime.json").read_text())
    snapshot = site / "vendor" / runtime["snapshot"]["name"]
    raw = gzip.decompress(snapshot.read_bytes())
    assert snapshot.name == f"python-{hashlib.sha256(raw).hexdigest()[:16]}.snapshot.gz"
    assert snapshot.parent.name == "pyodide"  # cached by the service worker with Pyodide, per build
    assert runtime["snapshot"]["jspi"] is True  # Debian's Chromium has WebAssembly stack switching
    assert str(ROOT).encode() not in raw


def test_a_site_without_a_draft_says_so_and_downloads_the_model_alone(site):
    shipped = json.loads((site / "model" / "manifest.json").read_text())
    assert "draft" not in shipped and shipped["draft_unavailable"]
    assert shipped["download_size"] == shipped["model_download_size"]
    hood = (site / "runtime" / "index.html").read_text()
    assert "none: this site was built without a draft model" in hood


def test_the_draft_ships_with_the_model_and_the_pages_state_the_total(tiny_export, tiny_draft, tmp_path):
    from tools.site import build_site

    site = build_site(tiny_export, tmp_path / "site", draft_dir=tiny_draft)
    shipped = json.loads((site / "model" / "manifest.json").read_text())
    draft = json.loads((tiny_draft / "draft.json").read_text())
    # The draft's graph and the table of the model's answers it copies from, each whole from its chunks.
    assert [entry["name"] for entry in shipped["draft"]["files"]] == ["draft.onnx", "answers.json"]
    for entry, built in zip(shipped["draft"]["files"], draft["files"], strict=True):
        whole = b"".join(decompress((site / "model" / chunk["name"]).read_bytes()) for chunk in entry["chunks"])
        assert hashlib.sha256(whole).hexdigest() == built["sha256"] == sha256_file(tiny_draft / entry["name"])
    assert shipped["draft"]["identity"] == ":".join(entry["sha256"] for entry in draft["files"])
    assert shipped["download_size"] == shipped["model_download_size"] + shipped["draft"]["download_size"]
    assert "draft_unavailable" not in shipped
    # Every size a page gives is labelled: on the wire (zstd-compressed chunks) or kept (what they unpack to).
    wire, kept = shipped["draft"]["download_size"], sum(entry["size"] for entry in shipped["draft"]["files"])
    assert wire < kept
    home = " ".join((site / "index.html").read_text().split())
    assert f"{shipped['download_size'] / 1e6:.0f} MB on the wire, after you agree" in home
    assert f"That includes step 6's draft model, {megabytes(wire)} MB on the wire." in home
    model_kept = sum(entry["size"] for entry in shipped["files"]) + kept
    assert f"(the model files {model_kept / 1e6:.0f} MB unpacked)" in home
    hood = " ".join((site / "runtime" / "index.html").read_text().split())
    # The tiny model's draft is the build's own (the committed one is the default model's).
    made = "trained once by this project and shipped with the source" if draft["training"].get("shipped") else \
        "trained by this site's build"
    assert (f"{draft['parameters']:,} parameters of its own ({megabytes(kept)} MB kept, {megabytes(wire)} MB on the wire), "
            f"{made} on the model's own answers") in hood
    last = "last position" if draft["window"] == 1 else f"last {draft['window']} positions"
    assert f"it reads the model's last hidden state at the text's {last} (its window)" in hood
    # The draft panel states the same two sizes, from the same facts (defaults.js), with the same labels.
    module = (site / "assets" / "onepass" / "panels" / "defaults.js").read_text()
    site_draft = json.loads(module.split("export const SITE_DRAFT = ", 1)[1].split(";\n", 1)[0])
    assert (site_draft["size"], site_draft["download"], site_draft["window"]) == (kept, wire, draft["window"])
    panel = (site / "assets" / "onepass" / "panels" / "draftmodel.js").read_text()
    assert "MB kept, ${megabytes(SITE_DRAFT.download)} MB on the wire" in panel


def test_step_6_s_presets_are_drawn_at_the_build_by_the_panel_s_own_code(site):
    """Reading step 6 starts no Python: the panel shows these draws until the reader presses a button."""
    from onepass.defaults import DEFAULTS
    from onepass.entry import sample

    module = (site / "assets" / "onepass" / "panels" / "defaults.js").read_text()
    drawn = json.loads(module.split("export const SAMPLING_DRAWN = ", 1)[1].split(";\n", 1)[0])
    presets = DEFAULTS["sampling"]["presets"]
    assert set(drawn["presets"]) == set(presets)
    for name, pq in presets.items():
        fresh = json.loads(sample({**pq, "draws": DEFAULTS["sampling"]["draws"], "seed": drawn["seed"]}))
        assert drawn["presets"][name] == fresh and fresh["verdict"]["consistent"]


def test_a_draft_for_another_model_stops_the_build(tiny_export, tiny_draft, tmp_path):
    other = tmp_path / "draft"
    other.mkdir()
    (other / "draft.onnx").write_bytes((tiny_draft / "draft.onnx").read_bytes())
    info = json.loads((tiny_draft / "draft.json").read_text())
    info["target"] = {"identity": "0" * 64, "name": "another model"}
    (other / "draft.json").write_text(json.dumps(info))
    env = {**os.environ, "ONEPASS_MODEL_DIR": str(tiny_export), "ONEPASS_DRAFT_DIR": str(other), "NO_MKDOCS_2_WARNING": "1"}
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
                           cwd=ROOT, env=env, capture_output=True, text=True)
    assert build.returncode != 0 and "was trained for another model" in build.stderr


def test_python_s_snapshot_is_kept_in_the_cache_under_what_it_is_made_from(tmp_path, monkeypatch):
    """hooks/python_snapshot.make keeps what it made (4.5 s of Chromium each build) and remakes it for another wheel
    or when the kept file is damaged. Chromium's making is stood in for here: it is what the site's build exercises."""
    import zipfile

    from hooks import python_snapshot

    monkeypatch.setenv("ONEPASS_CACHE", str(tmp_path / "cache"))
    made = []

    def make_it(pyodide, wheel, modules):
        memory = f"python started with {zipfile.ZipFile(wheel).read('onepass/x.py')!r}".encode()
        made.append(memory)
        return {"name": f"python-{hashlib.sha256(memory).hexdigest()[:16]}.snapshot.gz", "jspi": True}, gzip.compress(memory)

    monkeypatch.setattr(python_snapshot, "_make", make_it)
    pyodide, out = tmp_path / "pyodide", tmp_path / "out"
    pyodide.mkdir(), out.mkdir()
    (pyodide / "pyodide.asm.wasm").write_bytes(b"\0asm")

    def wheel(code: str) -> Path:
        path = tmp_path / f"onepass-{len(made)}.whl"
        with zipfile.ZipFile(path, "w") as files:
            files.writestr("onepass/x.py", code)
        return path

    first = python_snapshot.make(pyodide, wheel("a = 1"), ["onepass"], out)
    again = python_snapshot.make(pyodide, wheel("a = 1"), ["onepass"], out)
    assert first == again and len(made) == 1 and (out / first["name"]).is_file()
    other = python_snapshot.make(pyodide, wheel("a = 2"), ["onepass"], out)
    assert other["name"] != first["name"] and len(made) == 2
    for kept in (tmp_path / "cache" / "snapshots").glob("*.snapshot.gz"):
        kept.write_bytes(b"damaged")
    assert python_snapshot.make(pyodide, wheel("a = 1"), ["onepass"], out) == first and len(made) == 3
