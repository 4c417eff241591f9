"""Fixtures for the browser tests: the site built with the tiny model, served on localhost, in Chromium.

Debian's ``/usr/bin/chromium`` is driven by the Python ``playwright`` package
(no browser download). Every test page fails its test if it requests anything
outside localhost: the station must run offline.
"""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import urlopen

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# Small chunks, so the tiny model's 21 MB arrive in several pieces and the chunk path is exercised.
TEST_CHUNK_MB = "8"
LOAD_TIMEOUT_MS = 180_000
LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def build_site(model_dir: Path, site_dir: Path, chunk_mb: str = TEST_CHUNK_MB) -> Path:
    env = {**os.environ, "ONEPASS_MODEL_DIR": str(model_dir), "ONEPASS_CHUNK_MB": chunk_mb, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site_dir)],
                   cwd=ROOT, env=env, check=True)
    return site_dir


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """tools/serve.py over a folder, on a free localhost port (none of site/_headers when ``isolation`` is off)."""

    def __init__(self, folder: Path, isolation: bool = True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        flags = [] if isolation else ["--no-isolation"]
        self.process = subprocess.Popen([sys.executable, str(ROOT / "tools" / "serve.py"), "--dir", str(folder),
                                         "--port", str(self.port), *flags],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                urlopen(self.url, timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"tools/serve.py did not start on {self.url}")
                time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture(scope="session")
def tiny_site(tiny_export, tmp_path_factory) -> Path:
    return build_site(tiny_export, tmp_path_factory.mktemp("tiny_site") / "site")


def point_sitemap_at(site: Path, url: str) -> None:
    """Material's instant navigation follows only links its sitemap lists, matched with the port (it adopts the
    page's protocol and host, not its port); the build names site_url's, so the tests name their server's."""
    sitemap = site / "sitemap.xml"
    sitemap.write_text(re.sub(r"<loc>https?://[^/]+/", f"<loc>{url}", sitemap.read_text()))


@pytest.fixture(scope="session")
def tiny_server(tiny_site):
    server = Server(tiny_site)
    point_sitemap_at(tiny_site, server.url)
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
CONSENTED = "try { localStorage.setItem('onepass.modelConsent', 'true'); } catch (e) {}"


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


def load_runtime(page, url: str) -> dict:
    """Open the runtime page and wait until the worker has loaded the model; returns the load info."""
    page.goto(url + "runtime/")
    page.wait_for_function("() => window.onepass !== undefined")
    return page.evaluate("() => window.onepass().load()", )
