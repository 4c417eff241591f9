"""MkDocs build hook: the site's response headers, written to ``site/_headers``, and its policy in every page.

``site/_headers`` (the format Netlify and Cloudflare Pages read) is the one
list of response headers: ``tools/serve.py`` reads it and sends what it lists,
so the local server and a host cannot drift apart. Its rules: a
Content-Security-Policy that allows the site itself plus what WebAssembly
needs, nosniff, no referrer, the cross-origin-isolation headers, and caching
for a CDN (model chunks, named after their content, are immutable; everything
else is revalidated, so a new build never meets a stale file).

Hosts that cannot send headers (GitHub Pages) still get the policy: every page
carries it in a ``<meta http-equiv>`` tag. Material's small inline scripts are
allowed by their sha256, collected from the built pages, rather than by
``'unsafe-inline'``. This runs after the build, not page by page, because every
page must carry the same policy, which lists the scripts of all of them
(instant navigation keeps the first page's policy) and of ``404.html``, which is
not a page. References: CSP Level 3 (https://www.w3.org/TR/CSP3/), Netlify's
and Cloudflare's ``_headers`` documentation.
"""

import base64
import hashlib
import html
import re
from pathlib import Path

# The policy, one directive at a time, with why each source beyond 'self' is there.
POLICY = [
    ("default-src", "'self'", "nothing is fetched from outside the site"),
    ("script-src", "'self' 'wasm-unsafe-eval'",
     "Pyodide and onnxruntime-web compile WebAssembly, which needs 'wasm-unsafe-eval' (not JavaScript eval); "
     "Material's inline scripts are allowed by their sha256, listed after these"),
    ("style-src", "'self'",
     "no 'unsafe-inline': the pages carry no style attribute or element, and KaTeX, Chart.js and Material set "
     "styles through element.style, which CSP allows"),
    ("img-src", "'self' data:", "Material's stylesheet draws its icons (arrows, admonitions, search) as data: SVGs"),
    ("font-src", "'self'", "KaTeX's fonts, from vendor/katex/"),
    ("connect-src", "'self'", "the model's chunks, Pyodide's files, runtime.json, the search index"),
    ("worker-src", "'self'", "the model's worker and its store worker, ort's threads, the search worker, the service worker"),
    ("object-src", "'none'", "no plugins"),
    ("base-uri", "'self'", "no <base> pointing elsewhere"),
    ("form-action", "'self'", "no form posts anywhere"),
    ("frame-ancestors", "'none'", "no page of the site is meant to be framed (sent as a header only)"),
]
# WASM threads need a cross-origin isolated page (see README.md, "Deploying"). The service worker adds these
# too, where a host cannot (hooks/offline.py puts them into hooks/sw.js).
ISOLATION = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}
# A <meta> policy may not carry these: browsers ignore them there, and say so in the console.
HEADER_ONLY = {"frame-ancestors"}

_INLINE_SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)
_DATA_BLOCK = re.compile(r"""\btype=["']?(?!module\b|text/javascript\b)""")
_CHARSET = '<meta charset="utf-8">'


def inline_scripts(page: str) -> list[str]:
    """The text of each inline script a browser would run (JSON data blocks are not run, so need no hash)."""
    return [match["body"] for match in _INLINE_SCRIPT.finditer(page)
            if "src=" not in match["attrs"] and not _DATA_BLOCK.search(match["attrs"])]


def source_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(hashes: list[str], header: bool = True) -> str:
    directives = []
    for name, sources, _ in POLICY:
        if name in HEADER_ONLY and not header:
            continue
        if name == "script-src":
            sources = " ".join([sources, *hashes])
        directives.append(f"{name} {sources}")
    return "; ".join(directives)


def rules(hashes: list[str]) -> list[tuple[str, dict[str, str]]]:
    """(path pattern, headers) in _headers order; a later rule's value of a header replaces an earlier one's."""
    return [
        ("/*", {
            "Content-Security-Policy": policy(hashes),
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            **ISOLATION,
            # Revalidate everything (a 304 costs little), so a new build is seen at once.
            "Cache-Control": "no-cache",
        }),
        # A chunk's name is its content's sha256: a new model means new names, never a changed file.
        ("/model/chunks/*", {"Cache-Control": "public, max-age=31536000, immutable"}),
    ]


def format_rules(rules: list[tuple[str, dict[str, str]]], comments: list[str] = ()) -> str:
    """``_headers`` text: comment lines, then each path pattern with its headers indented under it."""
    lines = [f"# {comment}" for comment in comments]
    for path, headers in rules:
        lines.append(path)
        lines += [f"  {name}: {value}" for name, value in headers.items()]
    return "\n".join(lines) + "\n"


def headers_file(hashes: list[str]) -> str:
    comments = ["Written by hooks/headers.py at build time; tools/serve.py sends these too. Edit the hook, not this.",
                "Content-Security-Policy, directive by directive:"]
    comments += [f"  {name} {sources}: {why}" for name, sources, why in POLICY]
    return format_rules(rules(hashes), comments)


def with_meta(page: str, content: str) -> str:
    if _CHARSET not in page:
        raise RuntimeError(f"no {_CHARSET} to put the policy after")
    tag = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(content, quote=False)}">'
    return page.replace(_CHARSET, f"{_CHARSET}\n      {tag}", 1)


def on_post_build(config):
    site = Path(config["site_dir"])
    pages = sorted(site.rglob("*.html"))
    hashes = sorted({source_hash(script) for page in pages for script in inline_scripts(page.read_text())})
    meta = policy(hashes, header=False)
    for page in pages:
        page.write_text(with_meta(page.read_text(), meta))
    (site / "_headers").write_text(headers_file(hashes))
