"""MkDocs build hook: the model's runtime, a component of its own at the top of the tree, copied into the site.

``runtime/`` holds the worker the pages talk to, the model's worker, their
client, the loader and its store worker, the ONNX bridge, the pass harness and
the byte decoder. It is not documentation, so it lives outside ``docs/``, and
the pages reach it only through its client (``runtime/client.js``). The build
copies it to ``site/assets/onepass/runtime/``, where the pages, the service
worker, the tests and the benchmarks find it (``hooks/contract.py`` adds the
contract it is generated with, ``contract.js``). Listed before
``hooks/headers.py`` and ``hooks/offline.py``, so it is precached with the other assets.
"""

import shutil
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "runtime"
TARGET = Path("assets", "onepass", "runtime")


def on_post_build(config):
    target = Path(config["site_dir"]) / TARGET
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(SOURCE.glob("*.js")):
        shutil.copy2(path, target / path.name)
