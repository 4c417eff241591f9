"""MkDocs build hook: the panels' defaults, decided in Python, as a JavaScript module of the built site.

Each model panel's starting text and settings, and step 5's examples and
editable proposer, are written once, in ``onepass.panels`` (``DEFAULTS``),
which the build's traces (``hooks/traces.py``) run too. This writes them to
``site/assets/onepass/panels/defaults.js`` (``export const DEFAULTS = {...};``)
for the panels to import, with or without a model. It is listed before
``hooks/headers.py`` and ``hooks/offline.py``, so the service worker precaches
it with the other assets.
"""

import json
from pathlib import Path

from onepass.panels import DEFAULTS

MODULE = Path("assets", "onepass", "panels", "defaults.js")


def on_post_build(config):
    target = Path(config["site_dir"]) / MODULE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("/** Written by hooks/panels.py from py/onepass/panels.py (DEFAULTS): change them there. */\n"
                      f"export const DEFAULTS = {json.dumps(DEFAULTS, indent=2, ensure_ascii=False)};\n")
