"""Model loading in Chromium: chunks checked, cached for the next visit, clear retryable errors."""

import json

from tests.browser import load_runtime

pytest_plugins = ["tests.browser"]  # the browser fixtures, registered once for the whole session

LOAD = "() => window.onepass().load().then(() => 'loaded', (e) => ({code: e.code, message: e.message, retryable: e.retryable}))"


def chunks(site) -> list[dict]:
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    return [chunk for entry in manifest["files"] for chunk in entry["chunks"]]


def open_page(page, server):
    page.goto(server.url + "runtime/")
    page.wait_for_function("() => window.onepass !== undefined")


def test_the_site_ships_chunks_the_manifest_lists(tiny_site, tiny_export):
    listed = chunks(tiny_site)
    assert len(listed) > 2  # the tests build with small chunks
    for chunk in listed:
        assert (tiny_site / "model" / chunk["name"]).stat().st_size == chunk["size"]
    source = json.loads((tiny_export / "manifest.json").read_text())
    shipped = json.loads((tiny_site / "model" / "manifest.json").read_text())
    for entry, original in zip(shipped["files"], source["files"]):
        assert sum(c["size"] for c in entry["chunks"]) == original["size"]
        assert {k: v for k, v in entry.items() if k != "chunks"} == original


def test_a_missing_chunk_is_a_clear_retryable_error(page, tiny_server, tiny_site):
    name = chunks(tiny_site)[1]["name"]
    page.route(f"**/model/{name}", lambda route: route.fulfill(status=404, body="not here"))
    open_page(page, tiny_server)
    error = page.evaluate(LOAD)
    assert error["code"] == "not_found" and error["retryable"] and name in error["message"]
    page.wait_for_selector("[data-onepass-panel][data-state=error]")
    assert "could not be loaded" in page.inner_text(".onepass-status")
    page.unroute(f"**/model/{name}")
    assert page.evaluate(LOAD) == "loaded"  # the retry succeeds


def test_a_damaged_chunk_fails_its_hash(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[1]
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=b"\0" * chunk["size"]))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD)["code"] == "hash_mismatch"


def test_a_truncated_chunk_is_reported(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[0]
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=b"\0" * (chunk["size"] // 2)))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD)["code"] == "truncated"


def test_the_second_visit_loads_from_the_cache(page, tiny_server, tiny_site):
    served = {chunk["name"] for chunk in chunks(tiny_site)}
    open_page(page, tiny_server)
    assert page.evaluate(LOAD) == "loaded"
    fetched = []
    page.on("request", lambda request: "/model/" in request.url and fetched.append(request.url.rsplit("/", 1)[1]))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD) == "loaded"
    # The manifest is asked again (the model card reads it too), the chunks are not.
    assert "manifest.json" in fetched and not served & set(fetched)
    names = page.evaluate("() => caches.keys()")
    assert len(names) == 1 and names[0].startswith("onepass-model-")
