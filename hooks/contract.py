"""MkDocs build hook: what Python decides for the pages, written into the built site as JavaScript modules.

- ``site/assets/onepass/panels/defaults.js``: each model panel's starting text
  and settings, and step 5's examples and editable proposer (``onepass.defaults``'
  ``DEFAULTS``, which the build's traces, ``hooks/traces.py``, run too);
- ``site/assets/onepass/runtime/contract.js``: the contract between the pages
  and Python (``onepass.contract``): every kind of request with its fields and
  defaults, the modes, the timing parts, the error codes, the keys of each
  result, and their JSDoc types, for the runtime's client and worker.

``defaults.js`` also carries ``SITE_DRAFT``: what step 6's panels show of the draft
model the site ships (``hooks/model.py``'s manifest ``draft``: its window, its
parameters, its size kept and on the wire), or why there is none, so step 6 needs no
request of the model's folder until the reader asks for the model; and
``SAMPLING_DRAWN``: step 6's sampling presets drawn by ``onepass.entry.sample``
at the panel's first seed, which the panel shows until the reader draws in the
tab, so reading the page starts no Python. The same facts of the draft fill the
pages' ``{{ draft.* }}`` placeholders (``on_page_markdown``), labelled kept or on
the wire as the panel labels them. Both modules are written with or without a model. This hook is listed before
``hooks/headers.py`` and ``hooks/offline.py``, so the service worker precaches them with the other assets.
"""

import json
import re
import types
import typing
from dataclasses import fields
from pathlib import Path

from onepass import contract
from onepass.defaults import DEFAULTS
from onepass.entry import sample

MODULE = Path("assets", "onepass", "panels", "defaults.js")
CONTRACT = Path("assets", "onepass", "runtime", "contract.js")
# The sampling panel's first seed (docs/assets/onepass/panels/sampling.js reads it from SAMPLING_DRAWN). Any seed
# works, but at the 5 % level one in twenty fails by chance: seed 1 does, on the first preset.
FIRST_SEED = 2
_DRAFT_PLACEHOLDER = re.compile(r"\{\{\s*draft\.(\w+)\s*\}\}")
PLAIN = {str: "string", int: "number", float: "number", bool: "boolean", type(None): "null", typing.Any: "*"}


def jsdoc(hint) -> str:
    """A Python type hint as a JSDoc type."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in PLAIN:
        return PLAIN[hint]
    if isinstance(hint, str):  # a type contract.js defines
        return hint
    if origin is typing.Literal:
        return "(" + "|".join(json.dumps(arg) for arg in args) + ")"
    if origin is typing.Annotated:  # a JavaScript type of its own (contract.Float32: a Float32Array)
        return next((meta for meta in hint.__metadata__ if isinstance(meta, str)), None) or jsdoc(args[0])
    if origin in (typing.Union, types.UnionType):
        return "(" + "|".join(jsdoc(arg) for arg in args) + ")"
    if origin is list:
        return f"Array<{jsdoc(args[0])}>"
    if origin is dict:
        return f"Object<{jsdoc(args[0])}, {jsdoc(args[1])}>"
    if typing.is_typeddict(hint):
        return hint.__name__
    raise TypeError(f"no JSDoc type for {hint!r}")


def typedef(name: str, hints: dict, optional: set[str]) -> str:
    """``@typedef {Object} name`` with one ``@property`` per key (``[key]`` when it may be left out)."""
    lines = [f"/**\n * @typedef {{Object}} {name}"]
    for key, hint in hints.items():
        wire = key.removesuffix("_")
        lines.append(f" * @property {{{jsdoc(hint)}}} {f'[{wire}]' if key in optional else wire}")
    return "\n".join(lines) + "\n */"


def given(hint):
    """A required field's type: what a page must send (the ``None`` of its default only marks it required)."""
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    return args[0] if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1 else hint


def typedefs() -> list[str]:
    """Every request (its fields optional where they have a default), every result and event, as JSDoc."""
    docs = []
    for cls in contract.REQUESTS.values():
        hints = typing.get_type_hints(cls)
        docs.append(typedef(cls.__name__ + "Request", {contract.wire(f.name): given(hints[f.name]) for f in fields(cls)},
                            {contract.wire(f.name) for f in fields(cls) if f.default is not None}))
    for typed in contract.typed_dicts([contract.PassEvent, *contract.RESULTS.values(), *contract.MESSAGES.values()]):
        hints = typing.get_type_hints(typed, include_extras=True)
        optional = {key for key, hint in hints.items() if typing.get_origin(hint) is typing.NotRequired}
        plain = {key: typing.get_args(hint)[0] if key in optional else hint for key, hint in hints.items()}
        names = contract.wire_names(typed)  # a result's keys by the requests' rule, the runtime's messages as written
        docs.append(typedef(typed.__name__, {names[key]: hint for key, hint in plain.items()}, {names[key] for key in optional}))
    # Each kind's request and result by the kind's wire name, so the client's run(kind, ...) is typed by its kind.
    docs.append(typedef("Requests", {contract.wire(kind): f"{cls.__name__}Request" for kind, cls in contract.REQUESTS.items()},
                        set()))
    docs.append(typedef("Results", {contract.wire(kind): typed for kind, typed in contract.RESULTS.items()}, set()))
    docs.extend(f"/** @typedef {{{jsdoc(hint)}}} {name} */" for name, hint in contract.MESSAGES.items()
                if not typing.is_typeddict(hint))
    return docs


def contract_module() -> str:
    return ("/** Written by hooks/contract.py from py/onepass/contract.py: change the contract there. */\n\n"
            + "\n\n".join(typedefs()) + "\n\n"
            + f"export const CONTRACT = {json.dumps(contract.described(), indent=2, ensure_ascii=False)};\n")


def site_draft(manifest: dict | None) -> dict:
    """The draft model's facts the pages show before anything loads (the site's manifest's ``draft``): its window, its
    parameters, the bytes the browser keeps of it (``size``) and those it downloads (``download``, zstd-compressed),
    its table of answers' rows; or why the site has none."""
    draft = (manifest or {}).get("draft")
    if not draft:
        return {"unavailable": (manifest or {}).get("draft_unavailable") or "this site was built without a model"}
    return {"window": draft["window"], "parameters": draft["parameters"], "size": sum(f["size"] for f in draft["files"]),
            "download": draft["download_size"], "answers": draft.get("answers", {}).get("rows", 0),
            "shipped": bool(draft.get("training", {}).get("shipped"))}


def megabytes(size: int) -> str:
    """Bytes as the pages write them: whole MB, or tenths below 10 MB (the tiny test model's draft is small)."""
    return f"{size / 1e6:.0f}" if size >= 10e6 else f"{size / 1e6:.1f}"


def draft_sizes(draft: dict) -> str:
    """The draft's two sizes, each labelled: what the browser keeps, and what crosses the network."""
    return f"{megabytes(draft['size'])} MB kept, {megabytes(draft['download'])} MB on the wire"


def draft_placeholders(draft: dict) -> dict:
    """The ``{{ draft.* }}`` facts, from ``site_draft``: ``download``, a sentence for the home page's download;
    ``summary``, a line for Under the hood's table."""
    if "unavailable" in draft:
        return {"download": "", "summary": f"none: {draft['unavailable']} (step 6's live panel says so)"}
    return {"download": f"That includes step 6's draft model, {megabytes(draft['download'])} MB on the wire.",
            "summary": f"{draft['parameters']:,} parameters of its own ({draft_sizes(draft)}), {made(draft)} on the "
                       "model's own answers; it reads the model's last hidden state at "
                       f"the text's {window(draft['window'])} (its window) and proposes step 6's drafts"}


def made(draft: dict) -> str:
    """Where the site's draft was trained: once, by the project, and committed; or by this site's build."""
    return "trained once by this project and shipped with the source" if draft.get("shipped") else \
        "trained by this site's build"


def window(rows: int) -> str:
    """The positions a draft of ``rows`` rows reads, in words."""
    return "last position" if rows == 1 else f"last {rows} positions"


def sampling_drawn() -> dict:
    """Step 6's presets, each drawn as the panel's first press of its button would draw it (the same entry point)."""
    presets = DEFAULTS["sampling"]["presets"]
    draws = DEFAULTS["sampling"]["draws"]
    return {"seed": FIRST_SEED, "presets": {name: json.loads(sample({**pq, "draws": draws, "seed": FIRST_SEED}))
                                            for name, pq in presets.items()}}


def _chunks_manifest(config) -> dict | None:
    chunks = config.get("extra", {}).get("model_chunks")  # hooks/model.py's (folder, manifest), when the site has a model
    return chunks[1] if chunks else None


def on_page_markdown(markdown, page, config, files):
    facts = draft_placeholders(site_draft(_chunks_manifest(config)))
    return _DRAFT_PLACEHOLDER.sub(lambda match: facts.get(match.group(1), match.group(0)), markdown)


def defaults_module(manifest: dict | None) -> str:
    """``defaults.js`` for a site with the model of ``manifest`` (None: without one)."""
    return ("/** Written by hooks/contract.py from py/onepass/defaults.py (DEFAULTS): change them there. */\n"
            "/** The site's draft model, from its manifest (hooks/model.py). */\n"
            f"export const SITE_DRAFT = {json.dumps(site_draft(manifest), ensure_ascii=False)};\n"
            "/** Step 6's sampling presets drawn at the build, by the code the panel runs, at its first seed. */\n"
            f"export const SAMPLING_DRAWN = {json.dumps(sampling_drawn(), ensure_ascii=False)};\n"
            f"export const DEFAULTS = {json.dumps(DEFAULTS, indent=2, ensure_ascii=False)};\n")


def on_post_build(config):
    site = Path(config["site_dir"])
    for path, text in [(MODULE, defaults_module(_chunks_manifest(config))), (CONTRACT, contract_module())]:
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
