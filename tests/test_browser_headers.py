"""The site's response headers: one list, sent as listed, carried by every page, and a policy nothing breaks.

``site/_headers`` (written by hooks/headers.py) is the one list; tools/serve.py
must send exactly what it lists, and every page must carry the same
Content-Security-Policy in a ``<meta>`` tag for hosts that send no headers.
With the policy enforced, every page loads, every model panel runs, the maths
typesets and search answers, and the browser reports no violation: no
``securitypolicyviolation`` event in the page or in any worker, no refusal in
the console. Model chunks are cached for ever (their names are
their content's hash), everything else is revalidated, and revalidation works.
"""

import base64
import hashlib
import json
import re
from urllib.error import HTTPError
from urllib.request import Request, urlopen

import pytest
import yaml
from playwright.sync_api import Error as PlaywrightError

from tests.browser import LOAD_TIMEOUT_MS, ROOT, offline_page

pytest_plugins = ["tests.browser"]

NAV = [(title, page) for entry in yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"]
       for title, page in entry.items()]
PATHS = ["" if page == "index.md" else page.removesuffix(".md") + "/" for _, page in NAV]
IMMUTABLE = "public, max-age=31536000, immutable"
RUN_MS = 120_000
# A violation in the page is dispatched to the document as an event; the init script keeps them for the test.
RECORD_VIOLATIONS = """window.violations = [];
document.addEventListener('securitypolicyviolation', (e) => window.violations.push(
    `${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`));"""
# A worker's violations are events in the worker, and Chromium's own report of them never reaches Playwright;
# a listener added as the worker starts turns them into console errors, which do.
REPORT_IN_WORKER = """() => self.addEventListener('securitypolicyviolation', (e) => console.error(
    `Content Security Policy violation in a worker: ${e.effectiveDirective} blocked ${e.blockedURI || 'inline'}`))"""
# A function, not an expression: Playwright evaluates a bare expression with eval(), which the policy forbids.
HEADING_IS = "(title) => document.querySelector('article h1')?.textContent === title"


def listed_rules(site) -> list[tuple[str, dict]]:
    """The rules of site/_headers, read independently of tools/serve.py."""
    rules = []
    for line in (site / "_headers").read_text().splitlines():
        if line.startswith("/"):
            rules.append((line.strip(), {}))
        elif line.startswith("  ") and ":" in line:
            name, value = line.strip().split(":", 1)
            rules[-1][1][name] = value.strip()
    return rules


def listed_for(site, path: str) -> dict:
    headers = {}
    for pattern, values in listed_rules(site):
        if pattern == path or pattern.endswith("*") and path.startswith(pattern[:-1]):
            headers.update(values)
    return headers


def chunk_paths(site) -> list[str]:
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    return [f"/model/{chunk['name']}" for entry in manifest["files"] for chunk in entry["chunks"]]


def fetch(url: str, **headers):
    try:
        return urlopen(Request(url, headers=headers), timeout=10)
    except HTTPError as answer:  # a 304 arrives as an HTTPError
        return answer


def test_serve_sends_what_the_headers_file_lists(tiny_site, tiny_server):
    paths = ["/", "/runtime/", "/404.html", "/model/manifest.json", "/vendor/runtime.json", "/sitemap.xml",
             "/assets/onepass/runtime/worker.js", chunk_paths(tiny_site)[0]]
    for path in paths:
        listed = listed_for(tiny_site, path)
        with fetch(tiny_server.url + path.lstrip("/")) as response:
            sent = {name: response.headers[name] for name in listed}
        assert sent == listed, path
    policy = listed_for(tiny_site, "/")["Content-Security-Policy"]
    assert policy.startswith("default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'sha256-")
    assert "'unsafe-inline'" not in policy.split("; ")[1] and "'unsafe-eval'" not in policy
    assert listed_for(tiny_site, "/")["X-Content-Type-Options"] == "nosniff"
    assert listed_for(tiny_site, "/")["Referrer-Policy"] == "no-referrer"
    assert listed_for(tiny_site, "/")["Cross-Origin-Embedder-Policy"] == "require-corp"


def test_every_page_carries_the_policy_before_its_first_script(tiny_site):
    header = listed_for(tiny_site, "/")["Content-Security-Policy"]
    # frame-ancestors is ignored in a <meta> policy; everything else must be the same.
    expected = "; ".join(d for d in header.split("; ") if not d.startswith("frame-ancestors"))
    pages = sorted(tiny_site.rglob("*.html"))
    assert len(pages) == len(NAV) + 1  # and 404.html
    for page in pages:
        html = page.read_text()
        metas = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)
        assert metas == [expected], page
        assert html.index("Content-Security-Policy") < html.index("<script")
        for script in re.findall(r"<script>(.*?)</script>", html, re.S):
            digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
            assert f"'sha256-{digest}'" in header, f"an inline script of {page} is not in the policy"


def test_chunks_are_immutable_and_everything_else_is_revalidated(tiny_site, tiny_server):
    for path in chunk_paths(tiny_site):
        with fetch(tiny_server.url + path.lstrip("/")) as response:
            assert response.headers["Cache-Control"] == IMMUTABLE, path
    for path in ["", "runtime/", "model/manifest.json", "model/traces.json", "vendor/runtime.json",
                 "sw.js", "search/search_index.json"]:
        with fetch(tiny_server.url + path) as response:
            assert response.headers["Cache-Control"] == "no-cache", path


def test_a_revalidation_of_an_unchanged_file_is_answered_304_with_the_same_headers(tiny_server):
    url = tiny_server.url + "model/manifest.json"
    with fetch(url) as first:
        modified = first.headers["Last-Modified"]
        assert modified and first.status == 200
    with fetch(url, **{"If-Modified-Since": modified}) as again:
        assert again.status == 304
        assert again.headers["Cache-Control"] == "no-cache"
        assert again.headers["Content-Security-Policy"] == first.headers["Content-Security-Policy"]


def watch(worker) -> None:
    try:
        worker.evaluate(REPORT_IN_WORKER)
    except PlaywrightError:
        pass  # the worker ended before it could be watched (its page was left): it can report nothing more


@pytest.fixture(scope="module")
def enforced(chromium, tiny_server):
    """One reader's tab under the policy; its violations and console messages are checked when the module ends."""
    context, page, outside = offline_page(chromium)
    context.add_init_script(RECORD_VIOLATIONS)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    console, errors = [], []
    page.on("console", lambda message: console.append(message.text))
    page.on("worker", watch)
    page.on("pageerror", lambda error: errors.append(str(error)))
    yield page
    context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"
    assert errors == [], errors
    assert [text for text in console if "Content Security Policy" in text or "Refused to" in text] == []


def no_violations(page) -> None:
    assert page.evaluate("window.violations") == [], page.url


def test_every_page_loads_under_the_policy(enforced, tiny_server):
    for (title, _), path in zip(NAV, PATHS):
        enforced.goto(tiny_server.url + path)
        enforced.wait_for_function(HEADING_IS, arg=title)
        enforced.wait_for_load_state("networkidle")
        assert enforced.evaluate("window.crossOriginIsolated")
        no_violations(enforced)


def go(page, title: str) -> None:
    """Instant navigation, as a reader clicks the sidebar: the same document, so the same policy and worker."""
    page.locator(".md-nav--primary > .md-nav__list > .md-nav__item > a.md-nav__link", has_text=title).click()
    page.wait_for_function(HEADING_IS, arg=title)


def run(page, kind: str, button: str = ".onepass-run") -> None:
    page.locator(f"[data-onepass-panel={kind}] {button}").click()
    page.wait_for_selector(f"[data-onepass-panel={kind}][data-state=done]", timeout=RUN_MS)


def test_every_model_panel_runs_under_the_policy(enforced, tiny_server):
    enforced.goto(tiny_server.url + "one-at-a-time/")
    enforced.wait_for_selector("[data-onepass-panel=model-card][data-state=ready]")
    run(enforced, "greedy")
    assert enforced.locator("[data-onepass-panel=greedy]").get_attribute("data-source") == "live"
    go(enforced, "All at once")
    run(enforced, "all-at-once")
    go(enforced, "You guess")
    run(enforced, "guess", ".onepass-try--right")
    go(enforced, "Copy and check")
    enforced.locator("[data-onepass-panel=lookup] .onepass-run").click()
    enforced.wait_for_selector("[data-onepass-panel=lookup][data-identical=yes]", timeout=RUN_MS)
    go(enforced, "The real thing")
    enforced.wait_for_selector("[data-onepass-panel=sampling][data-state=done]", timeout=RUN_MS)
    assert enforced.locator("[data-onepass-panel=sampling] canvas").count() == 1
    go(enforced, "Under the hood")
    run(enforced, "generate")
    no_violations(enforced)


def test_maths_search_and_the_palette_work_under_the_policy(enforced, tiny_server):
    enforced.goto(tiny_server.url + "name-it/")
    enforced.wait_for_selector(".arithmatex .katex-display")
    assert enforced.locator(".arithmatex .katex").count() >= 6
    enforced.click("input.md-search__input")
    enforced.keyboard.type("Uszkoreit")  # typed, as a reader would: Material searches on key events
    # The results follow each keystroke: wait for the whole word's (the first letters' match more pages).
    enforced.wait_for_function("() => document.querySelector('.md-search-result__meta')?.textContent.includes('1 matching document')",
                               timeout=10_000)
    enforced.wait_for_selector(".md-search-result__link")
    assert "1 matching document" in enforced.inner_text(".md-search-result")
    enforced.click(".md-search-result__link")  # search.highlight marks the word on the page it opens
    enforced.wait_for_selector("article mark", state="attached")
    enforced.click("label[title='Switch to dark mode']")
    enforced.wait_for_function("() => document.body.dataset.mdColorScheme === 'slate'")
    no_violations(enforced)
