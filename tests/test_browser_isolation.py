"""Hosts that cannot send COOP/COEP: the site's service worker makes the page isolated, or it runs on one thread.

WASM threads need a cross-origin isolated page. `make serve` sends the two
headers; a plain static host does not, and then the service worker at the
site's root (hooks/sw.js) adds them and the first visit reloads once. Where
service workers are unavailable too, the worker falls back to one thread, and
the text is the same.
"""

import pytest

from tests.browser import Server, offline_page

pytest_plugins = ["tests.browser"]

TEXT = "The capital of France is Paris. The capital of Italy is"
GREEDY = "(text) => window.onepass().run('generate', {text, mode: 'greedy', maxNew: 8})"


@pytest.fixture(scope="module")
def plain_server(tiny_site):
    server = Server(tiny_site, isolation=False)
    yield server
    server.stop()


def run_on(browser, url: str, **context_options) -> tuple[dict, dict]:
    context, page, outside = offline_page(browser, **context_options)
    try:
        page.goto(url + "runtime/")
        # The first visit reloads once the service worker controls it; wait for whichever page ends up isolated or not.
        page.wait_for_load_state("load")
        ready = "window.onepass !== undefined && document.readyState === 'complete'"
        if context_options.get("service_workers") != "block":
            # Isolated and ready in the same document: the first, not isolated one may still be the one loaded.
            ready += " && window.crossOriginIsolated === true"
        page.wait_for_function(f"() => {ready}", timeout=60_000)
        info = page.evaluate("() => window.onepass().load()")
        return info, page.evaluate(GREEDY, TEXT)
    finally:
        context.close()
        assert outside == [], f"the page requested addresses outside localhost: {outside}"


def test_the_headers_file_lists_both_isolation_headers(tiny_site):
    headers = (tiny_site / "_headers").read_text()
    assert "Cross-Origin-Opener-Policy: same-origin" in headers
    assert "Cross-Origin-Embedder-Policy: require-corp" in headers
    assert (tiny_site / "sw.js").is_file()


def test_the_service_worker_isolates_a_plain_host_and_threads_give_the_same_text(chromium, plain_server, tiny_server):
    isolated, reference = run_on(chromium, tiny_server.url)
    via_worker, text = run_on(chromium, plain_server.url)
    assert via_worker["crossOriginIsolated"] is True
    assert via_worker["threads"] == isolated["threads"]
    assert text["tokens"] == reference["tokens"]


def test_without_service_workers_it_runs_on_one_thread(chromium, plain_server, tiny_server):
    _, reference = run_on(chromium, tiny_server.url)
    info, text = run_on(chromium, plain_server.url, service_workers="block")
    assert info["crossOriginIsolated"] is False
    assert info["threads"] == 1
    assert text["tokens"] == reference["tokens"]
