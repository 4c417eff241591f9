"""Runs bound to their page, in Chromium on the tiny model's site: leaving a page by instant navigation cancels the
runs it started, so the page the reader goes to (or comes back to) runs at once instead of saying "a run is already
in progress" with no Cancel that reaches the old run.

Each model panel starts a long run (the longest text its limits allow, the KV cache off, or a proposer that sleeps),
the reader follows a sidebar link away while the worker runs it, and back (or on to another model page), and presses
Run: it runs. One page and one site for them all; every navigation is instant (the same document throughout), so the
worker and its loaded model are the ones the old run held.
"""

import time

import pytest

from tests.browser import LOAD_TIMEOUT_MS, offline_page

pytest_plugins = ["tests.browser"]

RUN_MS = 60_000
LONG = "many words " * 480  # about 960 tokens (the limit is 1,024, with a chat turn's markup): a long pass on any model
PAGES = {"greedy": "one-at-a-time/", "all-at-once": "all-at-once/", "guess": "you-guess/", "lookup": "copy-and-check/",
         "draft-model": "the-real-thing/", "sampling": "the-real-thing/"}
# What a panel's state says once a run has ended, however it ended; the lookup panel says its verdict first.
ENDED = "(p) => ['done', 'error', 'cancelled'].includes(p.dataset.state) || p.dataset.identical"


@pytest.fixture(scope="module")
def reader(chromium, tiny_server):
    """One tab for the module, the model loaded on its first page; every page after it is reached by the sidebar."""
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    errors = []  # uncaught errors of the page and its worker; none may remain at the end
    page.on("pageerror", lambda err: errors.append(err))
    page.goto(tiny_server.url + PAGES["greedy"])
    page.wait_for_function("() => window.onepass !== undefined")
    page.evaluate("() => window.onepass().load()")
    page.evaluate("() => { window.sameDocument = true; }")  # kept by instant navigation, not by a page load
    yield page
    context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"
    assert [str(err) for err in errors] == []


def sidebar(page, kind: str) -> None:
    """Follow the sidebar's link to `kind`'s page (unless already there), and wait for its panel to mount."""
    path = PAGES[kind]
    if not page.url.endswith("/" + path):
        page.locator(f'nav.md-nav--primary a.md-nav__link[href$="{path}"]').first.click()
        page.wait_for_url(f"**/{path}")
    page.wait_for_function("(kind) => document.querySelector(`[data-onepass-panel=${kind}][data-mounted]`)"
                           "?.querySelector('button')", arg=kind)
    assert page.evaluate("window.sameDocument === true"), "the sidebar reloaded the page instead of navigating instantly"


def fill(page, kind: str, field: str, value: str) -> None:
    page.evaluate("""([kind, field, value]) => {
        const node = document.querySelector(`[data-onepass-panel=${kind}] ${field}`);
        if (node.type === 'checkbox') node.checked = value === 'on';
        else node.value = value;
        node.dispatchEvent(new Event(node.type === 'checkbox' ? 'change' : 'input', {bubbles: true}));
    }""", [kind, field, value])


def leave_while_running(page, kind: str, button: str, to: str, one_pass: bool = False) -> tuple[str, float]:
    """Press `button` of `kind`'s panel, and once the worker runs the request, follow the sidebar to `to`'s page:
    the old panel's last state, and the seconds from leaving to the worker being free of the run. A run of
    ``one_pass`` may end before the sidebar's link is followed on a quick processor (one pass over 1,000 tokens of the
    tiny model), so it is left at once and may end done rather than cancelled."""
    page.evaluate("(kind) => { window.left = document.querySelector(`[data-onepass-panel=${kind}]`); }", kind)
    page.locator(f"[data-onepass-panel={kind}] {button}").click()
    page.wait_for_function("() => window.onepass().running() || window.left.dataset.state !== 'running'", timeout=RUN_MS)
    if not one_pass:
        page.wait_for_timeout(300)  # into the run: its first passes
        # Still running: the run was long enough to be left (else the panel says why it ended).
        assert page.evaluate("window.left.dataset.state") == "running", page.evaluate("window.left.innerText")[:1200]
    began = time.monotonic()
    sidebar(page, to)
    page.wait_for_function("() => !window.onepass().running()", timeout=RUN_MS)
    ended = time.monotonic() - began
    page.wait_for_function(f"() => ({ENDED})(window.left)", timeout=RUN_MS)
    return page.evaluate("window.left.dataset.state"), ended


def runs(page, kind: str, button: str = ".onepass-run") -> None:
    """`kind`'s panel, on the page now shown, runs live to the end (its fields hold a text never run before)."""
    page.evaluate("(kind) => { delete document.querySelector(`[data-onepass-panel=${kind}]`).dataset.state; }", kind)
    page.locator(f"[data-onepass-panel={kind}] {button}").click()
    page.wait_for_function(f"(kind) => ({ENDED})(document.querySelector(`[data-onepass-panel=${{kind}}]`))", arg=kind,
                           timeout=RUN_MS)
    panel = page.locator(f"[data-onepass-panel={kind}]")
    assert panel.get_attribute("data-state") == "done", panel.inner_text()[-600:]
    assert panel.get_attribute("data-source") == "live"


def fresh(label: str) -> str:
    return f"{label} {time.monotonic()}: the capital of France is"


def test_leaving_step_2_cancels_its_run_and_the_next_model_page_runs_at_once(reader):
    sidebar(reader, "greedy")
    fill(reader, "greedy", ".onepass-text", LONG + fresh("long"))
    fill(reader, "greedy", ".onepass-kv", "off")
    state, ended = leave_while_running(reader, "greedy", ".onepass-run", to="all-at-once")
    assert state == "cancelled"
    assert ended < 2.5
    # Another model page, Run pressed at once.
    fill(reader, "all-at-once", ".onepass-text", fresh("next page"))
    runs(reader, "all-at-once")
    # And back.
    sidebar(reader, "greedy")
    fill(reader, "greedy", ".onepass-text", fresh("back"))
    runs(reader, "greedy")


@pytest.mark.parametrize("kind, field, button", [
    ("all-at-once", ".onepass-text", ".onepass-run"),  # one pass over 1,000 tokens, every row's predictions
    ("guess", ".onepass-guess", ".onepass-run"),  # one pass checking a guess of 1,000 tokens
    ("draft-model", ".onepass-text", ".onepass-run"),  # drafted, then one at a time to compare, the cache off
], ids=["all-at-once", "guess", "draft-model"])
def test_leaving_a_model_page_cancels_its_long_run_and_coming_back_it_runs(reader, kind, field, button):
    sidebar(reader, kind)
    if kind == "guess":
        fill(reader, kind, ".onepass-text", fresh("guess"))
    fill(reader, kind, field, LONG + fresh(kind))
    if reader.locator(f"[data-onepass-panel={kind}] .onepass-kv").count():
        fill(reader, kind, ".onepass-kv", "off")
    one_pass = kind in ("all-at-once", "guess")
    state, ended = leave_while_running(reader, kind, button, to="greedy" if kind != "greedy" else "lookup",
                                       one_pass=one_pass)
    assert state == "cancelled" or (one_pass and state == "done")
    assert ended < 2.5
    sidebar(reader, kind)
    fill(reader, kind, field, fresh(f"{kind} again"))
    runs(reader, kind, button)


def test_leaving_step_5_cancels_a_proposer_that_sleeps(reader):
    sidebar(reader, "lookup")
    reader.locator("[data-onepass-panel=lookup] .onepass-example", has_text="Your text").click()
    if reader.locator("[data-onepass-panel=lookup] .onepass-beyond").get_attribute("open") is None:
        reader.locator("[data-onepass-panel=lookup] .onepass-beyond summary").click()
    fill(reader, "lookup", ".onepass-text", fresh("sleepy"))
    fill(reader, "lookup", ".onepass-proposer", "import time\n\ndef propose(text):\n    time.sleep(30)\n    return []\n")
    state, ended = leave_while_running(reader, "lookup", ".onepass-run-mine", to="guess")
    assert state == "cancelled"
    assert ended < 2.5
    sidebar(reader, "lookup")
    reader.locator("[data-onepass-panel=lookup] .onepass-example", has_text="Your text").click()
    fill(reader, "lookup", ".onepass-text", fresh("lookup again") + " one two three one two three")
    runs(reader, "lookup")


def test_leaving_step_6_while_it_samples_from_the_model_and_coming_back_it_samples(reader):
    """Step 6's sampling from the model is one pass and the draws (under a second here): the reader leaves in the same
    moment as pressing it, and the run ends either way within Cancel's 2 s, the worker free for the next page."""
    sidebar(reader, "sampling")
    fill(reader, "sampling", ".onepass-live-text", LONG + fresh("sampling"))
    reader.evaluate("""() => {
        window.left = document.querySelector('[data-onepass-panel=sampling]');
        window.left.querySelector('.onepass-run-live').click();
        document.querySelector('nav.md-nav--primary a.md-nav__link[href$="you-guess/"]').click();
    }""")
    began = time.monotonic()
    reader.wait_for_url("**/you-guess/")
    reader.wait_for_function("() => !window.onepass().running()", timeout=RUN_MS)
    assert time.monotonic() - began < 2.5
    reader.wait_for_function(f"() => ({ENDED})(window.left)", timeout=RUN_MS)
    assert reader.evaluate("window.left.dataset.state") in ("cancelled", "done")
    sidebar(reader, "sampling")
    fill(reader, "sampling", ".onepass-live-text", fresh("sampling again"))
    runs(reader, "sampling", ".onepass-run-live")
