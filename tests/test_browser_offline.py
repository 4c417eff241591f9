"""Offline after one visit, a new build replacing the old one, and asking before the model's download.

The site's service worker (hooks/offline.py, hooks/sw.js) precaches every page
and small asset of the build, keeps the runtimes once the model has loaded, and
leaves the model to the loader's own store. Here a reader visits once online,
then the server is stopped and the browser put offline: reload, every page by
address and by link, three model panels live, search — with the same text as
online. The first-visit tests do what a new reader does: run the model (or only
agree to its download) on the first page they open, before the service worker
controls it. Each test serves its own copy of the site, since it stops the
server or swaps the build under it.
"""

import json
import shutil

import pytest

from hooks.model import served_files
from model_export.ort_format import save_ort
from tests.browser import LOAD_TIMEOUT_MS, Server, build_site, offline_page, point_sitemap_at, stored_chunks
from tests.test_pages_panels import RUN_MS

pytest_plugins = ["tests.browser"]

PAGES = {
    "": "One token per pass",
    "one-at-a-time/": "One at a time",
    "all-at-once/": "All at once",
    "you-guess/": "You guess",
    "copy-and-check/": "Copy and check",
    "the-real-thing/": "The real thing",
    "name-it/": "Name it",
    "check-yourself/": "Check yourself",
    "runtime/": "Under the hood",
}
# Three model panels, each on its own page: what it runs, and what the test reads back.
RUNS = {
    "one-at-a-time/": ("greedy", ".onepass-run", "[data-onepass-panel=greedy] .onepass-output"),
    "all-at-once/": ("all-at-once", ".onepass-run", "[data-onepass-panel=all-at-once] .onepass-grid"),
    "copy-and-check/": ("lookup", ".onepass-run", "[data-onepass-panel=lookup] .onepass-output"),
}


@pytest.fixture
def served(tiny_export, tiny_draft, tmp_path):
    site = build_site(tiny_export, tmp_path / "site", draft_dir=tiny_draft)  # as make serve builds it
    server = Server(site)
    point_sitemap_at(site, server.url)
    yield site, server
    server.stop()


def title(page) -> str:
    return page.locator("article h1").first.inner_text().strip()


def wait_for_service_worker(page) -> None:
    """Until the service worker has installed (its precache is complete) and controls the page."""
    page.wait_for_function("() => navigator.serviceWorker.controller !== null", timeout=60_000)


def run_panel(page, url: str, path: str) -> str:
    kind, button, output = RUNS[path]
    page.goto(url + path)
    root = f"[data-onepass-panel={kind}]"
    page.wait_for_selector(f"{root}[data-state=ready], {root}[data-source=trace]", timeout=LOAD_TIMEOUT_MS)
    if kind == "lookup":
        page.wait_for_selector(f"{root} .onepass-example")
    page.locator(f"{root} {button}").first.click()
    done = f"{root}[data-identical]" if kind == "lookup" else f"{root}[data-state=done]"
    page.wait_for_selector(done, timeout=RUN_MS)
    assert page.get_attribute(root, "data-source") == "live"
    return page.locator(output).first.inner_text()


def test_after_one_visit_the_site_works_offline(chromium, served):
    site, server = served
    url = server.url
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    errors = []
    try:
        page.goto(url)
        wait_for_service_worker(page)
        online = {path: run_panel(page, url, path) for path in RUNS}
        page.close()

        server.stop()
        context.set_offline(True)
        page = context.new_page()  # a new tab: nothing of the first one's memory or session storage
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.on("pageerror", lambda err: errors.append(str(err)))
        for path, heading in PAGES.items():
            page.goto(url + path)
            assert title(page) == heading
        page.reload()
        assert title(page) == "Under the hood"
        page.goto(url)
        page.evaluate("window.sameDocument = true")
        for heading in list(PAGES.values())[1:]:
            page.locator(".md-sidebar--primary a.md-nav__link", has_text=heading).first.click()
            page.wait_for_function("(t) => document.querySelector('article h1')?.textContent.trim() === t", arg=heading)
        assert page.evaluate("window.sameDocument") is True, "a link reloaded the page instead of navigating instantly"
        # Every panel runs the model live again, from the browser's caches alone, with the same text.
        for path, text in online.items():
            assert run_panel(page, url, path) == text, path
        page.locator(".md-search__input").first.click()
        page.keyboard.type("teacher forcing")
        page.wait_for_selector(".md-search-result__item", timeout=30_000)
        assert page.locator(".md-search-result__item").count() > 0
        # Python started from the build's snapshot offline too: the service worker cached it with Pyodide.
        assert page.evaluate("() => window.onepass().load()")["pythonSnapshot"] is True
        assert errors == []
    finally:
        context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


def go(page, heading: str) -> None:
    """Follow the sidebar's link to `heading`, as a reader would."""
    page.locator(".md-sidebar--primary a.md-nav__link", has_text=heading).first.click()
    page.wait_for_function("(t) => document.querySelector('article h1')?.textContent.trim() === t", arg=heading)


@pytest.fixture(scope="module")
def tiny_online(chromium, tiny_server) -> dict[str, str]:
    """The tiny model's three panels' text, run live online once for the module in a profile of its own, on the suite's
    tiny site (the export and draft each test's own copy of the site is built from)."""
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    try:
        return {path: run_panel(page, tiny_server.url, path) for path in RUNS}
    finally:
        context.close()
        assert outside == [], f"the page requested addresses outside localhost: {outside}"


def first_visit_then_offline(chromium, site, first: str, online: dict[str, str], panels=tuple(RUNS)) -> None:
    """A new reader opens copy-and-check/ and agrees to the download there, on a page the service worker does not
    control yet; `first` is "run" (they also run the model there) or "agree" (they only wait for it to load). The
    model card then says this browser is ready offline. Offline, in a new tab: reload, a page by address, a page by
    link, and the model panels on `panels` live, with the text they gave online (the first visit's own run, or
    `online`'s)."""
    server = Server(site)
    point_sitemap_at(site, server.url)
    url = server.url
    expected = {path: online[path] for path in panels if first != "run" or path != "copy-and-check/"}
    context, page, outside = offline_page(chromium, consent=False)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    errors = []
    try:
        page.goto(url + "copy-and-check/")
        assert page.evaluate("navigator.serviceWorker.controller") is None  # the reader's first page: not yet
        page.locator("[data-onepass-panel=model-card] .onepass-download").click()
        card = "[data-onepass-panel=model-card]"
        page.wait_for_selector(f"{card}[data-state=ready]")
        if first == "run":
            kind, button, output = RUNS["copy-and-check/"]
            page.locator(f"[data-onepass-panel={kind}] {button}").first.click()
            page.wait_for_selector(f"[data-onepass-panel={kind}][data-identical]", timeout=RUN_MS)
            expected["copy-and-check/"] = page.locator(output).first.inner_text()
        page.wait_for_selector(f"{card}[data-offline]", timeout=120_000)
        offline_note = page.locator(f"{card} .onepass-card-offline").inner_text()
        assert page.get_attribute(card, "data-offline") == "ready", offline_note
        assert offline_note.startswith("Ready offline")
        page.close()

        server.stop()
        context.set_offline(True)
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(url + "copy-and-check/")
        page.reload()
        assert title(page) == "Copy and check"
        page.goto(url + "one-at-a-time/")  # by address
        assert title(page) == "One at a time"
        go(page, "All at once")  # by link
        for path, text in expected.items():
            assert run_panel(page, url, path) == text, path
        page.wait_for_selector(f"{card}[data-offline=ready]", timeout=60_000)
        assert errors == []
    finally:
        context.close()
        server.stop()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


# Agreeing alone, the reader's first page's panel offline: the first visit that runs and the later visit above run the
# other panels offline.
@pytest.mark.parametrize(("first", "panels"), [("run", tuple(RUNS)), ("agree", ("copy-and-check/",))])
def test_after_a_real_first_visit_the_model_runs_offline(chromium, tiny_export, tiny_draft, tiny_online, tmp_path, first,
                                                         panels):
    first_visit_then_offline(chromium, build_site(tiny_export, tmp_path / "site", draft_dir=tiny_draft), first,
                             tiny_online, panels)


def test_after_a_real_first_visit_the_real_model_runs_offline(chromium, real_site):
    # One panel: each of the others would load the real model once more online and once offline (the tiny model's
    # tests run all three).
    first_visit_then_offline(chromium, real_site, "run", {}, panels=("copy-and-check/",))


def test_where_the_network_fails_while_the_browser_says_online_the_retry_runs_on_the_kept_runtimes(chromium, served):
    """Online, the browser fetches the runtimes' WebAssembly modules itself (hooks/sw.js says why). A host that is
    down while the browser still says it is online (the HTTP cache emptied, so nothing answers for them) fails them:
    the load says so in plain words, and its retry runs on the copies the service worker keeps, with the online text."""
    site, server = served
    url = server.url
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    errors = []
    try:
        page.goto(url + "one-at-a-time/")
        wait_for_service_worker(page)
        online = run_panel(page, url, "one-at-a-time/")
        page.wait_for_selector("[data-onepass-panel=model-card][data-offline=ready]", timeout=60_000)
        page.close()

        server.stop()
        page = context.new_page()
        page.set_default_timeout(LOAD_TIMEOUT_MS)
        context.new_cdp_session(page).send("Network.clearBrowserCache")
        served_by_worker = []
        page.on("response", lambda response: response.url.endswith(".wasm")
                and served_by_worker.append(response.from_service_worker))
        page.goto(url + "one-at-a-time/")
        assert page.evaluate("navigator.onLine") is True
        panel = "[data-onepass-panel=greedy]"
        page.wait_for_selector(f"{panel} .onepass-retry:visible")
        status = page.locator(f"{panel} .onepass-status").inner_text()
        assert status.startswith("The model could not be loaded: "), status
        assert "TypeError" not in status and "Failed to fetch" not in status, status
        # The failed start's last words (Pyodide's failed fetch, in the worker now ended) are the console's; from the
        # retry on, nothing is uncaught.
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.locator(f"{panel} .onepass-retry").click()
        page.wait_for_function("(p) => document.querySelector(p).textContent.startsWith('Loaded ')",
                               arg=f"{panel} .onepass-status")
        page.locator(f"{panel} .onepass-run").first.click()
        page.wait_for_selector(f"{panel}[data-state=done]", timeout=RUN_MS)
        assert page.locator(RUNS["one-at-a-time/"][2]).first.inner_text() == online
        assert served_by_worker and all(served_by_worker[-2:]), served_by_worker
        assert errors == []
    finally:
        context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


def new_model(export, folder):
    """A copy of `export` whose model file differs (another description): a new model for the site, same behaviour."""
    import hashlib

    import onnx

    shutil.copytree(export, folder)
    model = onnx.load(str(folder / "model.onnx"))
    model.doc_string = "tiny, rebuilt"  # kept in the ORT-format file (the graph's name is not)
    onnx.save(model, str(folder / "model.onnx"))
    manifest = json.loads((folder / "manifest.json").read_text())
    save_ort(folder / "model.onnx", folder / manifest["graph"])
    manifest["model"]["name"] = "tiny-random-qwen2 (test model, second build)"
    data = (folder / manifest["graph"]).read_bytes()
    entry = next(f for f in manifest["files"] if f["name"] == manifest["graph"])
    entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return folder


def chunk_names(site) -> set[str]:
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    return {chunk["name"] for entry in served_files(manifest) for chunk in entry["chunks"]}


def test_a_new_build_with_a_new_model_replaces_the_old_one(chromium, served, tiny_export, tmp_path):
    site, server = served
    url = server.url
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    try:
        page.goto(url + "runtime/")
        wait_for_service_worker(page)
        page.evaluate("() => window.onepass().load()")
        old_chunks = chunk_names(site)
        assert stored_chunks(page) == old_chunks
        old_caches = page.evaluate("() => caches.keys()")

        second = build_site(new_model(tiny_export, tmp_path / "export2"), tmp_path / "site2")
        shutil.rmtree(site)
        shutil.copytree(second, site)
        point_sitemap_at(site, url)
        new_chunks = chunk_names(site)
        assert old_chunks & new_chunks and new_chunks - old_chunks  # the tokenizer is shared, the model is not

        # The open page learns of the new build, and the reader chooses when to switch to it.
        page.reload()
        page.wait_for_selector(".onepass-update button", timeout=60_000)
        assert "new version" in page.inner_text(".onepass-update")
        # Listening before the switch: the reloaded page's model card may start the download at once.
        fetched = []
        page.on("request", lambda request: "/model/chunks/" in request.url and fetched.append(request.url.split("/model/")[1]))
        with page.expect_navigation():
            page.click(".onepass-update button")
        page.wait_for_selector("[data-onepass-panel=model-card]")
        page.wait_for_function("() => document.querySelector('.onepass-card-facts')?.textContent.includes('second build')")
        info = page.evaluate("() => window.onepass().load()")
        assert info["model"] == "tiny-random-qwen2 (test model, second build)"
        # Only the new model's chunks came over the network; the old model's are gone from the browser.
        assert set(fetched) == new_chunks - old_chunks
        assert stored_chunks(page) == new_chunks
        caches = page.evaluate("() => caches.keys()")
        assert not set(old_caches) - {"onepass-model"} & set(caches), "the old build's caches were kept"
    finally:
        context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


def test_the_model_downloads_only_when_the_reader_agrees(chromium, served):
    site, server = served
    context, page, outside = offline_page(chromium, consent=False)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    fetched = []
    page.on("request", lambda request: "/model/chunks/" in request.url and fetched.append(request.url))
    try:
        page.goto(server.url + "one-at-a-time/")
        page.wait_for_selector("[data-onepass-panel=model-card][data-state=asking]")
        page.wait_for_selector("[data-onepass-panel=greedy][data-source=trace]")
        card = page.locator("[data-onepass-panel=model-card]")
        assert "not downloaded yet" in card.inner_text() and "MB" in card.locator(".onepass-download").inner_text()
        # The question states what crosses the wire (the chunks are compressed); the facts add what the browser keeps.
        manifest = json.loads((site / "model" / "manifest.json").read_text())
        download, kept = manifest["download_size"], sum(f["size"] for f in served_files(manifest))
        assert download < kept
        assert f"{download / 1e6:.1f} MB" in card.locator(".onepass-download").inner_text()
        draft = manifest["draft"]["download_size"]
        facts = f"{download / 1e6:.1f} MB to download, {kept / 1e6:.1f} MB kept"
        assert f"{facts} (step 6's draft model: {draft / 1e6:.1f} MB of the download)" in card.inner_text()
        # Meanwhile the recorded run is in view; Run without agreeing asks instead of downloading.
        assert page.locator("[data-onepass-panel=greedy] .onepass-pass").count() > 0
        page.click("[data-onepass-panel=greedy] .onepass-run")
        page.wait_for_selector("[data-onepass-panel=greedy] .onepass-download")
        page.wait_for_timeout(2000)
        assert fetched == []
        # Agreeing in one place starts every panel's load; the run that waited goes on by itself.
        card.locator(".onepass-download").click()
        page.wait_for_selector("[data-onepass-panel=greedy][data-state=done]", timeout=RUN_MS)
        assert fetched and page.get_attribute("[data-onepass-panel=greedy]", "data-source") == "live"
        # Remembered: the next visit loads without asking.
        page.goto(server.url + "one-at-a-time/")
        page.wait_for_selector("[data-onepass-panel=model-card][data-state=ready]")
        assert page.locator(".onepass-download").count() == 0
    finally:
        context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"
