"""Accessibility: axe-core over all nine pages, light and dark, desktop and phone width, before and after a run,
and after following a sidebar link (each page opened once, in the scheme its reader's system prefers, and shown in
the other by Material's palette toggle; the page a link leads to, in the scheme it was opened in).

axe-core (pinned in package.json, injected by the test: the site does not ship it) must find no serious or
critical violation, Material's own widgets (search, navigation, footer) included. "After a run" means the
page's panels and widgets have been used once on the tiny model, so pass lists, token grids, charts, verdicts
and quiz feedback are on the page too (on the home page: a search, so its results are). Then the sidebar's link
to the next page is clicked, as a reader would: instant navigation swaps the page in place, and the link clicked
stays hovered, a state a fresh load never shows; the next page is audited so. At 390 px (a phone)
the page must not scroll sideways. Step 4's guess is checked with Enter, as a keyboard reader would.

The context bypasses the Content-Security-Policy, which would block the injected inline script.
"""

import re

import pytest
import yaml
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.browser import LOAD_TIMEOUT_MS, ROOT, offline_page

pytest_plugins = ["tests.browser"]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = {"serious", "critical"}
SCHEMES = {"light": "default", "dark": "slate"}  # prefers-color-scheme -> Material's data-md-color-scheme
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
RUN_MS = 120_000
SETTLE_MS = 2_000
# Every panel of the page has its model and Python ready (as in tools/screenshots.py), or there is none.
READY = """() => document.querySelector('[data-onepass-panel]')
    ? Promise.all([window.onepass().load(), window.onepass().python()]).then(() => true) : true"""
# Nothing still drawing: the sampling panel draws the build's draw of its preset as it opens, the chart loads Chart.js.
SETTLED = """() => !document.querySelector('[data-onepass-panel][data-state=running], [data-onepass-panel][data-state=drawing]')
    && [...document.querySelectorAll('[data-onepass-widget=speedup-chart]')].every((c) => 'ready' in c.dataset)"""
# Every finite animation and transition has ended (Material fades the search results in: axe, run mid-fade, reads a
# blend of the text and the background, a contrast the settled page does not have). Only running ones: a paused or idle
# one never finishes (one after the home page's search, at phone width in the second scheme, held each audit 5 s).
STILL = """() => Promise.race([
    Promise.all(document.getAnimations()
        .filter((a) => a.playState === 'running' && a.effect && a.effect.getComputedTiming().endTime !== Infinity)
        .map((a) => a.finished.catch(() => null))),
    new Promise((resolve) => setTimeout(resolve, 5000)),
]).then(() => true)"""
# Two animation frames: a resize observed in one is drawn by the next.
FRAMES = "() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => resolve(true))))"
# Step 5's figures, as step 6's chart reads them.
MEASURED = {"alpha": 0.62, "c": 0.004, "gamma": 6, "tokens_per_pass": 1.93, "passes": 41, "tokens": 79,
            "greedy_passes": 79, "label": "Capitals"}


def settle(page) -> None:
    page.wait_for_selector(".onepass-strip")
    assert page.evaluate(READY)
    page.wait_for_function(SETTLED)


def wait_done(page, kind: str, until: str = "[data-state=done][data-source=live]") -> None:
    page.wait_for_selector(f"[data-onepass-panel={kind}]{until}", timeout=RUN_MS)


def search(page):
    page.click("input.md-search__input")
    page.keyboard.type("draft")  # typed, as a reader would: Material searches on key events
    page.wait_for_selector(".md-search-result__link")


def run_greedy(page):
    page.click("[data-onepass-panel=greedy] .onepass-run")
    wait_done(page, "greedy")


def run_all_at_once(page):
    page.click("[data-onepass-panel=all-at-once] .onepass-run")
    wait_done(page, "all-at-once")
    page.click("[data-onepass-panel=all-at-once] .onepass-cell")  # opens one token's top 3
    page.click("[data-onepass-panel=all-at-once] .onepass-measure")
    wait_done(page, "all-at-once", "[data-measured=yes]")


def run_guess(page):
    page.press("[data-onepass-panel=guess] .onepass-guess", "Enter")
    wait_done(page, "guess")


def run_lookup(page):
    page.click("[data-onepass-panel=lookup] .onepass-run")
    wait_done(page, "lookup", "[data-identical=yes]")
    page.click("[data-onepass-panel=lookup] .onepass-beyond summary")  # the proposer editor


def run_chart_and_sampling(page):
    # The chart reads step 5's figures as it mounts: they are stored as step 5 stores them, then the page reloads.
    page.evaluate("m => localStorage.setItem('onepass.measured', JSON.stringify(m))", MEASURED)
    page.reload()
    settle(page)
    page.click("text=Use my α and c")
    page.click("[data-onepass-panel=sampling] .onepass-reseed")
    page.wait_for_selector("[data-onepass-panel=sampling] .onepass-seed >> text=seed 3")
    wait_done(page, "sampling", "[data-state=done]")


def answer_quiz(page):
    questions = page.locator(".onepass-quiz__question")
    questions.nth(0).locator(".onepass-quiz__option").nth(0).click()  # right
    questions.nth(2).locator(".onepass-quiz__option").nth(0).click()  # wrong
    page.wait_for_selector(".onepass-quiz__feedback--wrong")


def run_generate(page):
    page.click("[data-onepass-panel=generate] .onepass-run")
    wait_done(page, "generate")


# Path -> what a reader does there (on the home page: search); a page with nothing to do is checked as it opens.
PAGES = {"": search, "one-at-a-time/": run_greedy, "all-at-once/": run_all_at_once, "you-guess/": run_guess,
         "copy-and-check/": run_lookup, "the-real-thing/": run_chart_and_sampling, "name-it/": None,
         "check-yourself/": answer_quiz, "runtime/": run_generate}


TITLES = [title for entry in yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)["nav"] for title in entry]
NEXT = dict(zip(PAGES, [*list(PAGES)[1:], ""]))  # the page after each, by the nav's order (the last leads home)


def follow_sidebar_link(page, path: str) -> None:
    """Click the primary sidebar's link to ``path`` and wait until instant navigation has drawn that page."""
    if page.evaluate("document.getElementById('__search')?.checked"):
        # The home page's search results cover the sidebar (and a click after closing them drew a result's page under
        # the link's address): the link is followed from the page loaded afresh.
        page.reload()
        settle(page)
    page.evaluate("window.sameDocument = true")  # survives instant navigation, not a full page load
    title = TITLES[list(PAGES).index(path)]
    links = page.locator(".md-nav--primary > .md-nav__list > .md-nav__item > a.md-nav__link")
    links.filter(has_text=re.compile(rf"^\s*{re.escape(title)}\s*$")).click()
    page.wait_for_function("t => document.querySelector('article h1')?.textContent === t", arg=title)
    page.wait_for_selector(".onepass-strip")
    assert page.evaluate("window.sameDocument === true"), "the sidebar link should navigate instantly"
    settle(page)


def describe(violations: list[dict]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}")
        for node in v["nodes"][:8]:
            summary = " ".join(node["failureSummary"].split("\n")[1:2]).strip()
            lines.append(f"    {' '.join(map(str, node['target']))}: {summary}")
    return "\n".join(lines)


def audit(page, moment: str) -> list[str]:
    """axe's serious and critical violations at desktop and phone width, and a phone page that scrolls sideways."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found = []
    for name, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        # The page fits once Material's transitions (the search overlay's, for one) have ended.
        try:
            page.wait_for_function("document.documentElement.scrollWidth <= window.innerWidth", timeout=SETTLE_MS)
        except PlaywrightTimeoutError:
            overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
            found.append(f"{moment}, {name}: the page is {overflow} px wider than the screen")
        page.evaluate(FRAMES)  # the charts redraw at the new width (Chart.js resizes without animation)
        assert page.evaluate(STILL)
        violations = page.evaluate("() => axe.run(document, {resultTypes: ['violations']}).then((r) => r.violations)")
        blocking = [v for v in violations if v["impact"] in BLOCKING]
        if blocking:
            found.append(f"{moment}, {name}:\n{describe(blocking)}")
    page.set_viewport_size(DESKTOP)
    return found


def toggle_scheme(page) -> None:
    """Material's palette toggle (clicked from script: on the home page the search results cover the header), as a
    reader switches the scheme; the page's charts redraw in it."""
    before = page.get_attribute("body", "data-md-color-scheme")
    page.evaluate("document.querySelector('form[data-md-component=palette] label:not([hidden])').click()")
    page.wait_for_function("(b) => document.body.dataset.mdColorScheme !== b", arg=before)
    settle(page)


def audit_both(page, moment: str) -> list[str]:
    """``audit`` in the scheme the page shows and in the other one, switched back after."""
    first = page.get_attribute("body", "data-md-color-scheme")
    found = audit(page, f"{moment} ({first})")
    toggle_scheme(page)
    found += audit(page, f"{moment} ({page.get_attribute('body', 'data-md-color-scheme')})")
    toggle_scheme(page)
    return found


# One page load a page, in both schemes: it opens in the scheme the reader's system prefers (light on every other page,
# dark on the rest, so both are opened), and Material's toggle shows each moment in the other.
OPENED_IN = {path: list(SCHEMES)[index % 2] for index, path in enumerate(PAGES)}


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_violations_before_and_after_a_run(chromium, tiny_server, path):
    scheme = OPENED_IN[path]
    context, page, outside = offline_page(chromium, viewport=DESKTOP, color_scheme=scheme, bypass_csp=True)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    try:
        page.goto(tiny_server.url + path)
        assert page.get_attribute("body", "data-md-color-scheme") == SCHEMES[scheme]
        settle(page)
        found = audit_both(page, "before a run")
        if PAGES[path]:
            PAGES[path](page)
            found += audit_both(page, "after a run")
        follow_sidebar_link(page, NEXT[path])
        # In the scheme it opened in: the next page's own test audits it in both, and the pages alternate schemes, so
        # the hovered link and the page swapped in place are audited in each scheme across the pages.
        found += audit(page, f"{NEXT[path] or 'index'}, after following its sidebar link "
                             f"({page.get_attribute('body', 'data-md-color-scheme')})")
    finally:
        context.close()
    assert not found, f"{path or 'index'}:\n" + "\n".join(found)
    assert outside == [], f"the page requested addresses outside localhost: {outside}"
    assert errors == [], errors


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_download_question_is_accessible(chromium, tiny_server, scheme):
    """A first visit, before the reader has agreed to the model's download: the card and panels ask."""
    context, page, outside = offline_page(chromium, consent=False, viewport=DESKTOP, color_scheme=scheme, bypass_csp=True)
    try:
        page.goto(tiny_server.url + "one-at-a-time/")
        page.wait_for_selector("[data-onepass-panel=model-card][data-state=asking] .onepass-download")
        page.click("[data-onepass-panel=greedy] .onepass-run")  # the panel asks too
        page.wait_for_selector("[data-onepass-panel=greedy] .onepass-download")
        found = audit(page, "asking")
    finally:
        context.close()
    assert not found, "\n".join(found)
    assert outside == []


@pytest.mark.parametrize("scheme", SCHEMES)
def test_links_in_a_hovered_table_row_read(chromium, tiny_server, scheme):
    """A reader's pointer rests on a table row (it did after a sidebar tap closed the phone's drawer): Material shades
    the row, and the dark scheme's own link colour fell to 4.26:1 there (a CI run caught it on Name it)."""
    context, page, outside = offline_page(chromium, viewport=DESKTOP, color_scheme=scheme, bypass_csp=True)
    try:
        page.goto(tiny_server.url + "name-it/")
        settle(page)
        page.locator("article table tbody tr").nth(9).hover()
        found = audit(page, "a table row hovered")
    finally:
        context.close()
    assert not found, "\n".join(found)
    assert outside == []
