"""Fixtures for the browser tests: the site built with the tiny model, served on localhost, in Chromium.

Debian's ``/usr/bin/chromium`` is driven by the Python ``playwright`` package
(no browser download). Every test page fails its test if it requests anything
outside localhost: the station must run offline.
"""

import re
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlparse

import pytest

# The tests import the shared pieces from here, with the fixtures.
from tools.site import CHROMIUM, CHROMIUM_ARGS, CONSENTED, LOCAL_HOSTS, ROOT, Server, build_site  # noqa: F401

LOAD_TIMEOUT_MS = 180_000


@pytest.fixture(scope="session")
def tiny_site(tiny_export, tiny_draft, tmp_path_factory) -> Path:
    """The site as ``make serve`` builds it, with the tiny model and its tiny draft model."""
    return build_site(tiny_export, tmp_path_factory.mktemp("tiny_site") / "site", draft_dir=tiny_draft)


@pytest.fixture(scope="session")
def real_site(real_export, tmp_path_factory) -> Path:
    """The site with the real model (no draft), in 50 MB chunks: built once (half a minute) for every test of it. A
    test that serves it points its sitemap at its own server; none writes anything else into it."""
    return build_site(real_export, tmp_path_factory.mktemp("real_site") / "site", chunk_mb="50")


@pytest.fixture(scope="session")
def tiny_site_without_draft(tiny_export, tmp_path_factory) -> Path:
    """The site of a model for which no draft could be built."""
    return build_site(tiny_export, tmp_path_factory.mktemp("tiny_site_without_draft") / "site")


def point_sitemap_at(site: Path, url: str) -> None:
    """Material's instant navigation follows only links its sitemap lists, matched with the port (it adopts the
    page's protocol and host, not its port); the build names site_url's, so the tests name their server's."""
    sitemap = site / "sitemap.xml"
    sitemap.write_text(re.sub(r"<loc>https?://[^/]+/", f"<loc>{url}", sitemap.read_text()))


def serving(site: Path) -> Server:
    """``site`` served on a port of its own, its sitemap naming that port."""
    server = Server(site)
    point_sitemap_at(site, server.url)
    return server


@pytest.fixture(scope="session")
def tiny_server(tiny_site):
    server = serving(tiny_site)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def tiny_server_without_draft(tiny_site_without_draft):
    server = serving(tiny_site_without_draft)
    yield server
    server.stop()


# Module scope, not session: Playwright's sync API keeps an asyncio loop running in this thread while the
# browser is open, and asyncio.run() in any later test would fail.
@pytest.fixture(scope="module")
def chromium():
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: `make setup` installs Debian's chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


# The reader has agreed to the model's download before (store.js KEYS.consent), so panels load it as they open.


@contextmanager
def loaded_page(browser, site: Path):
    """``site`` served, and a fresh page of it with the model loaded (what the real model's tests share); the page
    must request nothing outside localhost."""
    server = Server(site)
    context, page, outside = offline_page(browser)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    try:
        page.goto(server.url)
        page.wait_for_function("() => window.onepass !== undefined")
        page.evaluate("() => window.onepass().load()")
        yield page
    finally:
        context.close()
        server.stop()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


def offline_page(browser, consent: bool = True, **context_options):
    """A fresh context and page, and the list of non-local URLs it requested (must stay empty).

    ``consent`` pre-agrees to the model download, as a returning reader has; pass False to see the question.
    """
    context = browser.new_context(**context_options)
    if consent:
        context.add_init_script(CONSENTED)
    page = context.new_page()
    outside: list[str] = []
    page.on("console", lambda message: print(f"[console.{message.type}] {message.text}"))

    def guard(route):
        host = urlparse(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in LOCAL_HOSTS:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    # Requests from workers go through the context as well; this listener catches any the router misses.
    context.on("request", lambda request: request.url.startswith(("http://", "https://"))
               and urlparse(request.url).hostname not in LOCAL_HOSTS and outside.append(request.url))
    return context, page, outside


@pytest.fixture
def page(chromium):
    context, page, outside = offline_page(chromium)
    yield page
    context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


# The file names in the model's store (runtime/loader.js: an OPFS folder of chunks named by their sha256).
MODEL_STORE = """async () => {
  const folder = await (await navigator.storage.getDirectory()).getDirectoryHandle('onepass-model', {create: true});
  const names = [];
  for await (const name of folder.keys()) names.push(name);
  return names;
}"""


def stored_chunks(page) -> set[str]:
    """The chunks the page's model store holds, as the manifest names them (``chunks/<sha256>.bin``)."""
    return {f"chunks/{name}" for name in page.evaluate(MODEL_STORE)}


def load_runtime(page, url: str) -> dict:
    """Open the runtime page and wait until the worker has loaded the model; returns the load info."""
    page.goto(url + "runtime/")
    page.wait_for_function("() => window.onepass !== undefined")
    return page.evaluate("() => window.onepass().load()", )
