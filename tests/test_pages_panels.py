"""Every panel of steps 2-6 in Chromium, on the tiny model's site: results, marks, cache, traces, bad input.

The panels are mounted by hand on the runtime page (``window.onepassMount``),
so this module does not depend on the lesson's Markdown. One page serves the
whole module: the model's weights are first held back, to see the
precomputed traces and the retry, then let through (by the first test, or by
the ``panels`` fixture when a test runs on its own).
"""

import json
import re

import pytest

from tests.browser import LOAD_TIMEOUT_MS, offline_page

pytest_plugins = ["tests.browser"]

PANELS = ["model-card", "greedy", "all-at-once", "guess", "lookup", "sampling"]
RUN_MS = 120_000
CHUNKS = "**/model/chunks/*"


def mount(page, url: str) -> None:
    page.goto(url + "runtime/")
    page.wait_for_function("() => window.onepassMount !== undefined")
    page.evaluate("""(kinds) => {
        // The page's own panels go first, so each kind appears once.
        document.querySelectorAll('[data-onepass-panel]').forEach((node) => node.remove());
        const article = document.querySelector('article');
        for (const kind of kinds) article.append(Object.assign(document.createElement('div'), {}));
        [...article.children].slice(-kinds.length).forEach((div, i) => { div.dataset.onepassPanel = kinds[i]; });
        window.onepassMount();
    }""", PANELS)


@pytest.fixture(scope="module")
def held_back(chromium, tiny_server):
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    # The model's weights are held back at first: the panels must show their precomputed runs, then fail to load.
    page.route(CHUNKS, lambda route: route.abort())
    mount(page, tiny_server.url)
    yield page
    context.close()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"
    assert errors == [], errors


@pytest.fixture
def panels(held_back):
    """The page with the weights let through and the model loaded, whichever of the module's tests runs first."""
    held_back.unroute(CHUNKS)
    assert held_back.evaluate("() => window.onepass().load().then(() => true)")
    return held_back


def panel(page, kind: str):
    return page.locator(f"[data-onepass-panel={kind}]")


def test_traces_show_before_the_model_and_a_failed_load_offers_retry(held_back):
    panels = held_back
    for kind in ["greedy", "all-at-once", "guess", "lookup"]:
        panels.wait_for_selector(f"[data-onepass-panel={kind}][data-source=trace]")
        text = panel(panels, kind).inner_text()
        assert "A recorded run, made when this site was built, on the build machine" in text
        assert re.search(r"Recorded on \d{4}-\d\d-\d\d with native onnxruntime on .+, \d+ cores, \d thread", text)
    assert panel(panels, "greedy").locator(".onepass-pass").count() == 16
    panels.wait_for_selector("[data-onepass-panel=greedy][data-state=error]")
    assert "could not be loaded" in panel(panels, "greedy").locator(".onepass-status").inner_text()
    retry = panel(panels, "greedy").locator(".onepass-retry")
    assert retry.is_visible()
    panels.unroute(CHUNKS)
    retry.click()
    panels.wait_for_selector("[data-onepass-panel=greedy] .onepass-retry", state="hidden")
    assert "Loaded tiny-random-qwen2" in panel(panels, "greedy").locator(".onepass-status").inner_text()


def test_model_card_names_the_model_and_says_whether_it_runs_offline(panels):
    card = panel(panels, "model-card")
    panels.wait_for_selector("[data-onepass-panel=model-card][data-state=ready]")
    panels.wait_for_selector("[data-onepass-panel=model-card][data-offline]", timeout=120_000)
    text = card.inner_text()
    assert "tiny-random-qwen2 (test model)" in text and "MB" in text and "int8" in text.lower() or "quantised" in text
    assert "(100 %)" in text
    assert "Ready offline" in text, text
    # Threads and isolation are Under the hood's (its card has data-onepass-detail), not every lesson page's.
    assert "thread" not in text


def run(page, kind: str, button: str = ".onepass-run", until: str = "[data-state=done]") -> str:
    page.locator(f"[data-onepass-panel={kind}] {button}").click()
    page.wait_for_selector(f"[data-onepass-panel={kind}]{until}", timeout=RUN_MS)
    return panel(page, kind).inner_text()


def test_greedy_passes_appear_one_by_one_with_counters_in_lockstep(panels):
    panels.evaluate("""() => {
        window.seen = [];
        const counters = document.querySelector('[data-onepass-panel=greedy] .onepass-counters');
        new MutationObserver(() => window.seen.push(counters.textContent))
            .observe(counters, {childList: true, characterData: true, subtree: true});
    }""")
    run(panels, "greedy")
    seen = [re.match(r"Passes: (\d+) · tokens: (\d+)", s).groups() for s in panels.evaluate("window.seen")]
    rising = [(int(p), int(t)) for p, t in seen if p != "0"]
    assert rising == [(k, k) for k in range(1, 17)]
    greedy = panel(panels, "greedy")
    assert greedy.locator(".onepass-pass .onepass-tok--model").count() == 16
    for kind in ["accepted", "rejected", "corrected", "bonus", "model"]:
        assert greedy.locator(f".onepass-legend .onepass-tok--{kind}").count() == 1
    assert greedy.locator(".onepass-tok--model").first.get_attribute("title").startswith("the model's token")
    last = json.loads(panels.evaluate("localStorage.getItem('onepass.lastPass')"))
    assert last["ms"] > 0 and last["model"] == "tiny-random-qwen2 (test model)"


def test_kv_cache_off_gives_the_same_passes_and_a_repeat_comes_from_cache(panels):
    greedy = panel(panels, "greedy")
    greedy.locator(".onepass-kv").uncheck()
    run(panels, "greedy")
    line = greedy.locator(".onepass-kvline").inner_text()
    assert re.search(r"KV cache on: 16 passes, [\d.]+ ms · KV cache off: 16 passes, [\d.]+ ms", line), line
    greedy.locator(".onepass-kv").check()
    run(panels, "greedy")
    assert greedy.get_attribute("data-source") == "cache"
    assert "From cache" in greedy.locator(".onepass-status").inner_text()
    assert greedy.locator(".onepass-pass").count() == 16


def test_html_is_shown_as_text_and_empty_text_gets_a_message(panels):
    greedy = panel(panels, "greedy")
    greedy.locator(".onepass-text").fill("<img src=x onerror=alert(1)><b>bold?</b> ünï 😀 text")
    run(panels, "greedy")
    assert greedy.locator(".onepass-output b, .onepass-output img").count() == 0
    assert "<b>bold?</b>" in greedy.locator(".onepass-output").inner_text()
    greedy.locator(".onepass-text").fill("   ")
    greedy.locator(".onepass-run").click()
    assert "The text is empty" in greedy.locator(".onepass-notice").inner_text()
    greedy.locator(".onepass-text").fill("many words " * 700)
    run(panels, "greedy", until="[data-state=error]")
    assert "this page accepts up to 1024" in greedy.locator(".onepass-status").inner_text()


def test_a_second_click_while_running_is_refused(panels):
    greedy = panel(panels, "greedy")
    greedy.locator(".onepass-text").fill("A fresh text so that the cache does not answer")
    panels.evaluate("""() => { const b = document.querySelector('[data-onepass-panel=greedy] .onepass-run'); b.click(); b.click(); }""")
    panels.wait_for_selector("[data-onepass-panel=greedy][data-state=done]", timeout=RUN_MS)
    assert "already in progress" in greedy.locator(".onepass-notice").inner_text()
    # Another panel asking while the worker is busy is refused by the worker itself.
    outcome = panels.evaluate("""async () => {
        const rt = window.onepass();
        const first = rt.run('generate', {text: 'one two three', maxNew: 60});
        const second = await rt.run('predict', {text: 'again'}).then(() => 'ran', (e) => e.code);
        await first;
        return second;
    }""")
    assert outcome == "busy"


def test_all_at_once_predicts_under_every_token_and_measures(panels):
    text = run(panels, "all-at-once")
    result = panel(panels, "all-at-once")
    assert result.get_attribute("data-source") == "live"
    cells = result.locator(".onepass-cell").count()
    assert cells > 5 and f"{cells} tokens, {cells} predictions, 1 pass" in text
    assert "%" in result.locator(".onepass-next").first.get_attribute("title")
    run(panels, "all-at-once", ".onepass-measure", "[data-measured=yes]")
    assert re.search(r"over 5 tokens: [\d.]+ ms; over 30 tokens: [\d.]+ ms", result.locator(".onepass-measured").inner_text())


def test_guess_cases(panels):
    guess = panel(panels, "guess")
    # Right throughout: the model's own continuation, then the bonus token.
    run(panels, "guess", ".onepass-try--right")
    assert guess.get_attribute("data-bonus") == "true"
    drafted = guess.locator(".onepass-pass .onepass-tok--accepted").count()
    assert drafted >= 2 and guess.get_attribute("data-accepted") == str(drafted)
    assert guess.locator(".onepass-pass .onepass-tok--bonus").count() == 1
    assert "came free" in guess.locator(".onepass-verdict").inner_text()
    right = guess.locator(".onepass-guess").input_value()
    # Wrong from the first token (and the spacing try): no token kept, the model's own token replaces the rest.
    for guess_text in [right + " no", " zzz" + right, right.lstrip() if right.startswith(" ") else " " + right]:
        guess.locator(".onepass-guess").fill(guess_text)
        run(panels, "guess", ".onepass-run")
        accepted = int(guess.get_attribute("data-accepted"))
        assert guess.get_attribute("data-bonus") == "false"
        assert guess.locator(".onepass-pass .onepass-tok--corrected").count() == 1
        assert guess.locator(".onepass-pass .onepass-tok--accepted").count() == accepted
    assert "at the first disagreement the model writes" in guess.locator(".onepass-verdict").inner_text()
    run(panels, "guess", ".onepass-try--spacing")
    assert guess.locator(".onepass-guess").input_value() == "Berlin."


def lookup_run(page, button: str = ".onepass-run") -> str:
    page.evaluate("() => delete document.querySelector('[data-onepass-panel=lookup]').dataset.identical")
    page.locator(f"[data-onepass-panel=lookup] {button}").click()
    page.wait_for_function("""() => { const p = document.querySelector('[data-onepass-panel=lookup]');
        return p.dataset.identical || p.dataset.state === 'error' || p.dataset.state === 'cancelled'; }""", timeout=RUN_MS)
    return panel(page, "lookup").inner_text()


def test_lookup_examples_equal_greedy_and_write_the_measured_figures(panels):
    lookup = panel(panels, "lookup")
    for title in ["Capitals", "Spelling"]:
        lookup.locator(".onepass-example", has_text=title).click()
        text = lookup_run(panels)
        assert lookup.get_attribute("data-identical") == "yes"
        assert "Identical to one-at-a-time: yes" in text
        assert lookup.locator(".onepass-match").count() == int(lookup.get_attribute("data-passes"))
        measured = json.loads(panels.evaluate("localStorage.getItem('onepass.measured')"))
        assert measured["label"] == title and measured["passes"] == int(lookup.get_attribute("data-passes"))
        assert measured["greedy_passes"] == int(lookup.get_attribute("data-greedy-passes")) and measured["gamma"] == 6
        assert 0 <= measured["alpha"] <= 1 and measured["c"] >= 0
    lookup.locator(".onepass-example", has_text="Your text").click()
    lookup.locator(".onepass-text").fill("<b>x</b> one two three one two three one two")
    lookup_run(panels)
    assert lookup.get_attribute("data-identical") == "yes"
    assert lookup.locator(".onepass-output b").count() == 0


def set_proposer(page, source: str) -> None:
    lookup = panel(page, "lookup")
    if not lookup.locator(".onepass-beyond").get_attribute("open") == "":
        lookup.locator(".onepass-beyond summary").click()
    lookup.locator(".onepass-proposer").fill(source)


def test_an_edited_proposer_changes_the_passes_not_the_text(panels):
    lookup = panel(panels, "lookup")
    lookup.locator(".onepass-example", has_text="Past tense").click()
    lookup_run(panels)
    greedy_passes = int(lookup.get_attribute("data-greedy-passes"))
    request = panels.evaluate("""() => window.onepass().run('generate', {text: document.querySelector(
        '[data-onepass-panel=lookup] .onepass-example-prompt').textContent, mode: 'greedy', maxNew: 64})""")
    # A proposer that knows the answer: far fewer passes, the same text.
    set_proposer(panels, f"ANSWER = {request['prompt'] + request['tokens']}\n\n"
                         "def propose(text):\n    return ANSWER[len(text):len(text) + 6]\n")
    text = lookup_run(panels, ".onepass-run-mine")
    assert lookup.get_attribute("data-identical") == "yes", text
    assert int(lookup.get_attribute("data-passes")) < greedy_passes


@pytest.mark.parametrize("source, message", [
    ("def propose(text):\n    return 1 / 0\n", "propose raised ZeroDivisionError"),
    ("def propose(text)\n    return []\n", "syntax error on line 1"),
    ("def propose(text):\n    return [-5, 10**9]\n", "ids run from 0 to"),
    ("def propose(text):\n    return 'abc'\n", "must return a list"),
])
def test_a_broken_proposer_shows_an_error_and_the_panel_still_works(panels, source, message):
    lookup = panel(panels, "lookup")
    set_proposer(panels, source)
    lookup_run(panels, ".onepass-run-mine")
    assert lookup.get_attribute("data-state") == "error"
    assert message in lookup.locator(".onepass-status").inner_text()
    lookup.locator(".onepass-reset-proposer").click()
    lookup_run(panels, ".onepass-run-mine")
    assert lookup.get_attribute("data-identical") == "yes"


def test_a_proposer_that_never_returns_is_stopped_by_cancel(panels):
    lookup = panel(panels, "lookup")
    lookup.locator(".onepass-example", has_text="Spelling").click()
    set_proposer(panels, "def propose(text):\n    while True:\n        pass\n")
    lookup.locator(".onepass-run-mine").click()
    panels.wait_for_timeout(1500)
    lookup.locator(".onepass-cancel").click()
    panels.wait_for_selector("[data-onepass-panel=lookup][data-state=cancelled]", timeout=30_000)
    assert "Cancelled" in lookup.locator(".onepass-status").inner_text()
    lookup.locator(".onepass-reset-proposer").click()
    lookup_run(panels, ".onepass-run-mine")
    assert lookup.get_attribute("data-identical") == "yes"


def test_sampling_follows_the_target_with_a_chi_square_verdict(panels):
    sampling = panel(panels, "sampling")
    panels.wait_for_selector("[data-onepass-panel=sampling][data-state=done]", timeout=RUN_MS)
    # Until a button is pressed, the build's draw of the preset (no Python started); pressed, the tab draws the same.
    if sampling.get_attribute("data-source") == "recorded":
        assert "Drawn when this site was built" in sampling.locator(".onepass-status").inner_text()
        recorded = sampling.locator(".onepass-count").all_inner_texts()
        sampling.locator(".onepass-run").click()
        panels.wait_for_selector("[data-onepass-panel=sampling][data-state=done][data-source=live]", timeout=RUN_MS)
        assert sampling.locator(".onepass-count").all_inner_texts() == recorded
    assert sampling.get_attribute("data-consistent") == "true"
    counts = [int(c) for c in sampling.locator(".onepass-count").all_inner_texts()]
    assert sum(counts) == 10_000
    verdict = sampling.locator(".onepass-verdict").inner_text()
    # The chi-squared test's tail probability is not called a p-value: p is the target's probability here.
    assert "p-value" not in verdict
    assert re.search(r"χ² = [\d.]+ with 5 degrees of freedom; an exact rule gives a χ² this large or larger with "
                     r"probability [\d.e-]+: consistent", verdict)
    assert sampling.locator("canvas").count() == 1
    sampling.locator(".onepass-reseed").click()
    panels.wait_for_function("() => document.querySelector('[data-onepass-panel=sampling] .onepass-seed').textContent === 'seed 3'")
    panels.wait_for_selector("[data-onepass-panel=sampling][data-state=done]")
    sampling.locator(".onepass-p").first.fill("-1")
    sampling.locator(".onepass-run").click()
    panels.wait_for_selector("[data-onepass-panel=sampling][data-state=error]")
    assert "at least 0" in sampling.locator(".onepass-status").inner_text()


def test_sampling_on_the_model_s_own_next_token_distribution(panels):
    sampling = panel(panels, "sampling")
    for kind in ["flattened", "one-hot", "uniform"]:
        sampling.locator(".onepass-draft").select_option(kind)
        sampling.locator(".onepass-run-live").click()
        panels.wait_for_selector("[data-onepass-panel=sampling][data-state=done][data-p=model]", timeout=RUN_MS)
        # The model's top ten tokens and "other": p and q as numbers, 10,000 kept tokens counted against p.
        rows = sampling.locator(".onepass-sampling-table tr")
        assert rows.count() == 1 + 10 + 1 and rows.last.locator("td").first.inner_text() == "other"
        assert sum(int(c) for c in sampling.locator(".onepass-count").all_inner_texts()) == 10_000
        assert re.search(r"χ² = [\d.]+ with \d+ degrees of freedom", sampling.locator(".onepass-verdict").inner_text())
        assert "p is the model's after \"The capital of France is\"" in sampling.locator(".onepass-status").inner_text()
    sampling.locator(".onepass-live-text").fill("  ")
    sampling.locator(".onepass-run-live").click()
    # Refused before the run, as every panel refuses an empty text: the words change, not the state.
    panels.wait_for_function("() => document.querySelector('[data-onepass-panel=sampling] .onepass-status')"
                             ".textContent.includes('The text is empty')")
    sampling.locator(".onepass-preset").select_option(index=1)  # the presets still work (their values reset)
    panels.wait_for_selector("[data-onepass-panel=sampling][data-state=done][data-p=preset]", timeout=RUN_MS)
