"""Serve the built site on localhost with the headers WASM threads need.

onnxruntime-web runs multi-threaded only in a cross-origin isolated page, which
takes two response headers (COOP and COEP). Any static host that can set them
works the same; see README.md for hosts that cannot. ``--no-isolation``
serves like such a host (no headers), which the tests use to check the
coi-serviceworker fallback and the single-threaded path.
"""

import argparse
import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}
EXTRA_TYPES = {".mjs": "text/javascript", ".wasm": "application/wasm", ".onnx": "application/octet-stream"}


class PlainHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, **EXTRA_TYPES}


class IsolatedHandler(PlainHandler):
    def end_headers(self):
        for name, value in ISOLATION_HEADERS.items():
            self.send_header(name, value)
        super().end_headers()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="site")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--no-isolation", action="store_true", help="send no COOP/COEP headers, like a plain static host")
    args = parser.parse_args()
    handler = PlainHandler if args.no_isolation else IsolatedHandler
    server = ThreadingHTTPServer((args.host, args.port), functools.partial(handler, directory=args.dir))
    print(f"serving {args.dir}/ at http://{args.host}:{args.port}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
