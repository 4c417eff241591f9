"""Shared fixtures: the tiny test model and the real default model, both built by our exporter.

Exports are cached (see model_export/cache.py), so only the first run pays for
them. ``ONEPASS_SKIP_REAL=1`` skips the tests that need the real 0.5B model.
"""

import json
import os
from pathlib import Path

import pytest

from model_export.build import build
from model_export.cache import sha256_file

DATA = Path(__file__).parent / "data"
# The sweeps over many prompts run whole only with ONEPASS_SWEEPS=1 (DEVELOPERS.md); CI runs each on a part of its set.
SWEEPS = os.environ.get("ONEPASS_SWEEPS") == "1"


def sweep(quick, whole):
    """What a sweep runs over: ``quick`` in CI and ``make test``, ``whole`` with ``ONEPASS_SWEEPS=1``."""
    return whole if SWEEPS else quick


@pytest.fixture(scope="session")
def tiny_export() -> Path:
    return build("tiny")


@pytest.fixture(scope="session")
def tiny_model(tiny_export):
    """The tiny export behind the lesson's seam (native onnxruntime)."""
    from onepass.backends.native import NativeModel

    return NativeModel(tiny_export)


@pytest.fixture(scope="session")
def real_export() -> Path:
    if os.environ.get("ONEPASS_SKIP_REAL") == "1":
        pytest.skip("ONEPASS_SKIP_REAL=1")
    return build("default")


@pytest.fixture(scope="session")
def tiny_stock_graph(tiny_export, tmp_path_factory) -> Path:
    """The stock int8 quantisation of the tiny export's float32 reference (benchmarks/peers.py), the graph the
    benchmarks put beside ours: it takes no first_row and answers only logits and the KV cache."""
    from benchmarks.peers import quantise

    stock = tmp_path_factory.mktemp("stock") / "stock.onnx"
    quantise(tiny_export / "reference" / "model_fp32.onnx", stock)
    return stock


@pytest.fixture(scope="session")
def held_out_prompts() -> list[str]:
    """tests/data/prompts.json without those the draft's corpus also asks (two of its 251 chat questions): the prompts
    the real draft's sweeps run, none of which it learned from."""
    from draft import corpus

    asked = [request for _, request in corpus.requests()]
    return [text for text in json.loads((DATA / "prompts.json").read_text()) if not corpus.meets(text, asked)]


@pytest.fixture(scope="session")
def gguf_tokenizer():
    """transformers' tokenizer built from the whole pinned GGUF, its control tokens registered: the reference the
    exported tokenizer.json (which the GGUF's header gives) is checked against. Kept beside the GGUF as the tiny
    export's is beside the header, keyed by the code that builds it (``cached_tokenizer_from_gguf``): about 25 s the
    first time, most of it gguf's reader parsing the vocabulary three times, 1 s after."""
    from model_export.sources import fetch_default_gguf
    from model_export.tokenizer import cached_tokenizer_from_gguf

    return cached_tokenizer_from_gguf(fetch_default_gguf())


@pytest.fixture(scope="session")
def tiny_draft(tiny_export) -> Path:
    """The tiny model's draft model, as ``python -m draft`` builds it (seconds; cached)."""
    from draft.build import build as build_draft

    return build_draft(tiny_export, log=lambda message: None)


@pytest.fixture(scope="session")
def real_draft(real_export) -> Path:
    """The real model's draft as ``make serve`` ships it: the committed draft (draft/shipped/), assembled with the
    export's word table in seconds (``draft.shipped.assemble``); where none is committed, the quick draft the build
    trains (13–20 minutes the first time, cached), only with ``ONEPASS_REAL_DRAFT=1``."""
    from draft import shipped
    from draft.build import build as build_draft
    from onepass.backends.native import DraftUnavailable

    try:
        return shipped.assemble(real_export, log=lambda message: None)
    except DraftUnavailable as why:
        if os.environ.get("ONEPASS_REAL_DRAFT") != "1":
            pytest.skip(f"{why}; ONEPASS_REAL_DRAFT=1 trains the quick one (13–20 minutes the first time)")
    return build_draft(real_export, log=lambda message: None)


def ids_of(folder: Path, text: str) -> list[int]:
    """``text`` as token ids, by the export's own tokenizer.json."""
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(folder / "tokenizer.json")).encode(text).ids


def first_tokens(model, prompt: list[int], draft, runs: int, seed: int, drafted: bool, rule=None):
    """The whole-run sampling tests' sample: the first three tokens of ``runs`` runs at temperature 1, plain or (with
    ``drafted``) drafted two tokens at a time by ``draft`` under ``rule`` (the lesson's unless given), tallied."""
    import asyncio
    import random

    from onepass.sampled import whole_runs

    return asyncio.run(whole_runs(model, prompt, runs, 3, 1.0, random.Random(seed), draft=draft if drafted else None,
                                  gamma=2, **({"rule": rule} if rule else {})))


def with_own_answers(export: Path, draft: Path, texts: list[str], folder: Path, max_new: int = 16) -> Path:
    """A copy of the ``draft`` folder at ``folder`` whose table of answers (draft/answers.py) holds the model's own
    greedy answers to ``texts`` (every context, seen once or more): the tiny draft's own table has no confident row
    (its training answers are a random model's), so this is what makes "lookup+draft" copy from the answers."""
    import shutil

    import numpy as np

    from draft.answers import table
    from draft.data import Sequences
    from draft.target import Target

    target, data = Target(export, threads=1), Sequences()
    for text in texts:
        prompt = ids_of(export, text)
        ids = target.greedy([prompt], max_new)[0][0]
        data.add(ids, ids[1:] + [0], np.zeros((len(ids), 1)), "chat", len(prompt))
    shutil.copytree(draft, folder)
    answers = table(data, min_count=1)
    (folder / "answers.json").write_text(json.dumps(answers))
    info = json.loads((folder / "draft.json").read_text())
    info["answers"]["rows"] = sum(len(rows) for rows in answers["rows"].values())
    for entry in info["files"]:
        if entry["name"] == "answers.json":
            entry.update(size=(folder / "answers.json").stat().st_size, sha256=sha256_file(folder / "answers.json"))
    (folder / "draft.json").write_text(json.dumps(info))
    return folder


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


@pytest.fixture(scope="session")
def held_text() -> str:
    return (DATA / "held_text.txt").read_text()


# A test of issue 25's files (changing in parallel) that builds the tiny draft twice, about 30 s: slow, named here.
SLOW = {"test_draft_build.py::test_the_built_draft_keeps_the_interface_and_a_rebuild_gives_the_same_bytes"}


BUILDS = {"tiny_site", "real_site", "tiny_site_without_draft", "tiny_server", "tiny_draft", "draft_model", "real_draft"}


def pytest_collection_modifyitems(items):
    """Mark each test by what it needs, so a subset is one ``-m`` away (see DEVELOPERS.md):
    ``browser`` drives Chromium, ``real`` needs the real 0.5B model, and one that needs the built site or the tiny
    draft model (which is trained first) is ``slow``."""
    for item in items:
        needs = set(item.fixturenames)
        if needs & {"chromium", "page"}:
            item.add_marker(pytest.mark.browser)
        if needs & BUILDS or f"{item.path.name}::{item.originalname}" in SLOW:
            item.add_marker(pytest.mark.slow)
        if "real_export" in needs:
            item.add_marker(pytest.mark.real)
