"""Screenshots of every page of the station: desktop and phone width, light and dark palette.

Builds the site with the model in ``ONEPASS_MODEL_DIR`` (the tiny test model when unset), serves it on
localhost with tools/serve.py, opens every page in Debian's Chromium through playwright and saves
``build/screenshots/<page>-<desktop|phone>-<light|dark>.png`` (whole pages). The build and the server
are the browser tests' own (tests/browser.py), so the screenshots show what the tests check.

    make screenshots                       # or: .venv/bin/python -m tools.screenshots [--out DIR]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.site import CHROMIUM, CHROMIUM_ARGS, CONSENTED, Server, build_site

ROOT = Path(__file__).resolve().parent.parent

PAGES = ["", "one-at-a-time/", "all-at-once/", "you-guess/", "copy-and-check/", "the-real-thing/", "name-it/",
         "check-yourself/", "runtime/"]
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
SCHEMES = ("light", "dark")
SETTLE_MS = 2_000  # after the network goes quiet: the chart's animation, KaTeX, a panel's first paint
# Pages with a panel are shot once their model and Python are ready, so the panels show their controls.
READY = """() => document.querySelector('[data-onepass-panel]')
    ? Promise.all([window.onepass().load(), window.onepass().python()]).then(() => true, () => false) : true"""
LOAD_TIMEOUT_MS = 600_000


def model_dir() -> Path:
    if os.environ.get("ONEPASS_MODEL_DIR"):
        return Path(os.environ["ONEPASS_MODEL_DIR"])
    printed = subprocess.run([sys.executable, "-m", "model_export", "--source", "tiny"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
    return Path(printed.strip().splitlines()[-1])


def shoot(url: str, out: Path) -> list[Path]:
    from playwright.sync_api import sync_playwright

    saved = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for device, viewport in VIEWPORTS.items():
            for scheme in SCHEMES:
                # Material picks the palette whose media query matches, until the reader toggles it.
                context = browser.new_context(viewport=viewport, color_scheme=scheme)
                context.add_init_script(CONSENTED)  # pictures of the panels at work, not of the download question
                page = context.new_page()
                page.set_default_timeout(LOAD_TIMEOUT_MS)
                for path in PAGES:
                    page.goto(url + path, wait_until="networkidle")
                    page.wait_for_function("() => window.onepass !== undefined")
                    page.evaluate(READY)
                    page.wait_for_timeout(SETTLE_MS)
                    target = out / f"{path.strip('/') or 'index'}-{device}-{scheme}.png"
                    page.screenshot(path=str(target), full_page=True)
                    saved.append(target)
                context.close()
        browser.close()
    return saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        site = build_site(model_dir(), Path(scratch) / "site")
        server = Server(site)
        try:
            saved = shoot(server.url, args.out)
        finally:
            server.stop()
    print(f"{len(saved)} screenshots in {args.out}")


if __name__ == "__main__":
    main()
