"""Serve the built site on localhost with the response headers its ``_headers`` file lists.

``site/_headers`` (written by hooks/headers.py, in the format Netlify and
Cloudflare Pages read) is the one list of the site's headers: the
Content-Security-Policy and its companions, the cross-origin-isolation headers
WASM threads need, and Cache-Control. This server reads it and sends, for each
path, what its matching rules list (a later rule's value replaces an earlier
one's, as on Netlify), so what the tests see is what a host is told to send.
Conditional requests (If-Modified-Since, answered 304) work as in Python's
own server. ``--no-isolation`` sends none of them, like a host that cannot
send headers (GitHub Pages), which the tests use to check the service-worker
fallback and the single-threaded path.
"""

import argparse
import functools
import re
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

EXTRA_TYPES = {".mjs": "text/javascript", ".wasm": "application/wasm", ".onnx": "application/octet-stream"}


def read_rules(headers_file: Path) -> list[tuple[re.Pattern, dict[str, str]]]:
    """The rules of a ``_headers`` file: a path pattern (``*`` matches anything, slashes too), then its headers."""
    rules = []
    for line in headers_file.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace():
            name, _, value = line.strip().partition(":")
            rules[-1][1][name.strip()] = value.strip()
        else:
            pattern = re.compile(".*".join(re.escape(part) for part in line.strip().split("*")))
            rules.append((pattern, {}))
    return rules


def headers_for(rules: list[tuple[re.Pattern, dict[str, str]]], path: str) -> dict[str, str]:
    headers = {}
    for pattern, values in rules:
        if pattern.fullmatch(path):
            headers.update(values)
    return headers


class PlainHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **EXTRA_TYPES}


class HeadersHandler(PlainHandler):
    def end_headers(self):
        # Read on every request: a rebuild while serving changes the policy's script hashes.
        rules = read_rules(Path(self.directory) / "_headers")
        for name, value in headers_for(rules, unquote(urlsplit(self.path).path)).items():
            self.send_header(name, value)
        super().end_headers()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="site")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0: a free one (the line printed names it)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="send none of _headers' headers (no COOP/COEP, no CSP), like a plain static host")
    args = parser.parse_args()
    if not args.no_isolation and not (Path(args.dir) / "_headers").is_file():
        parser.error(f"{args.dir}/_headers is missing: build the site first (make site)")
    handler = functools.partial(PlainHandler if args.no_isolation else HeadersHandler, directory=args.dir)
    server = ThreadingHTTPServer((args.host, args.port), handler)
    print(f"serving {args.dir}/ at http://{args.host}:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
