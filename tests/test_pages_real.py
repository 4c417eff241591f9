"""The panels on the real model in Chromium: step 5's three examples equal greedy, and steps 3-4 work.

Prints, for the lead, each example's passes and time with prompt lookup and
one token per pass (``pytest -s``). One real-model site and one page for the
module; ``ONEPASS_SKIP_REAL=1`` skips it.
"""

import re

import pytest

from onepass.examples import EXAMPLES
from tests.browser import LOAD_TIMEOUT_MS, Server, build_site, offline_page
from tests.test_pages_panels import lookup_run, mount, panel, run

pytest_plugins = ["tests.browser"]

COMPARE = re.compile(r"Identical to one-at-a-time: (yes|no) · prompt lookup: (\d+) passes, ([\d.]+) ms · "
                     r"one at a time: (\d+) passes, ([\d.]+) ms")


@pytest.fixture(scope="module")
def real_panels(real_export, chromium, tmp_path_factory):
    server = Server(build_site(real_export, tmp_path_factory.mktemp("real_pages") / "site", chunk_mb="50"))
    context, page, outside = offline_page(chromium)
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    mount(page, server.url)
    page.evaluate("() => window.onepass().load()")
    yield page
    context.close()
    server.stop()
    assert outside == [], f"the page requested addresses outside localhost: {outside}"


@pytest.mark.parametrize("example", EXAMPLES, ids=[e.key for e in EXAMPLES])
def test_step5_example_equals_greedy_on_the_real_model(real_panels, example):
    lookup = panel(real_panels, "lookup")
    lookup.locator(".onepass-example", has_text=example.title).click()
    lookup_run(real_panels)
    line = lookup.locator(".onepass-compare").inner_text()
    match = COMPARE.search(line)
    assert match, line
    same, passes, ms, greedy_passes, greedy_ms = match.groups()
    print(f"\n{example.key}: prompt lookup {passes} passes, {ms} ms; greedy {greedy_passes} passes, {greedy_ms} ms; "
          f"identical: {same}")
    assert same == "yes"
    assert int(passes) <= int(greedy_passes)
    if example.key == "spelling":
        assert int(passes) >= int(greedy_passes) - 2  # nothing worth copying
    else:
        assert int(passes) < int(greedy_passes)


def test_all_at_once_and_guess_panels_on_the_real_model(real_panels):
    run(real_panels, "all-at-once")
    grid = panel(real_panels, "all-at-once")
    assert grid.get_attribute("data-source") == "live"
    tokens = grid.locator(".onepass-cell-token").all_inner_texts()
    nexts = grid.locator(".onepass-next").all_inner_texts()
    # After "The capital of Germany is", the real model predicts " Berlin".
    assert nexts[tokens.index("␣is", 10)] == "␣Berlin"
    run(real_panels, "all-at-once", ".onepass-measure", "[data-measured=yes]")
    print("\n" + grid.locator(".onepass-measured").inner_text())
    guess = panel(real_panels, "guess")
    run(real_panels, "guess", ".onepass-try--right")
    assert guess.get_attribute("data-bonus") == "true"
    run(real_panels, "guess", ".onepass-try--spacing")
    assert guess.get_attribute("data-accepted") == "0"
    assert guess.locator(".onepass-pass .onepass-tok--corrected").inner_text().endswith("␣Berlin")
    run(real_panels, "guess", ".onepass-try--early")
    assert guess.get_attribute("data-accepted") == "0" and guess.get_attribute("data-bonus") == "false"
