"""The built site, served on localhost and opened in Debian's Chromium: shared by the browser tests
(tests/browser.py), the benchmarks and the screenshots, which must all see the same site the same way.
"""

import os
import re
import socket
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# Small chunks, so the tiny model's 21 MB arrive in several pieces and the chunk path is exercised.
TEST_CHUNK_MB = "8"
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# What a returning reader has: the model download agreed to (docs/assets/onepass/store.js KEYS.consent).
CONSENTED = "try { localStorage.setItem('onepass.modelConsent', 'true'); } catch (e) {}"


def build_site(model_dir: Path, site_dir: Path, chunk_mb: str = TEST_CHUNK_MB, draft_dir: Path | None = None) -> Path:
    """The site with the export at ``model_dir`` and, if given, its draft model at ``draft_dir`` (else none)."""
    env = {**os.environ, "ONEPASS_MODEL_DIR": str(model_dir), "ONEPASS_DRAFT_DIR": str(draft_dir or ""),
           "ONEPASS_CHUNK_MB": chunk_mb, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site_dir)],
                   cwd=ROOT, env=env, check=True)
    return site_dir


class Server:
    """tools/serve.py over a folder, on a free localhost port (none of site/_headers when ``isolation`` is off)."""

    def __init__(self, folder: Path, isolation: bool = True):
        flags = [] if isolation else ["--no-isolation"]
        # The server binds a free port itself and names it (a port chosen here could be taken by another test worker
        # before the server binds it, and the test would talk to that worker's server).
        self.process = subprocess.Popen([sys.executable, str(ROOT / "tools" / "serve.py"), "--dir", str(folder),
                                         "--port", "0", *flags],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            self.stop()
            raise RuntimeError(f"tools/serve.py did not start on {folder}: {line!r}")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}/"
        deadline = time.monotonic() + 20
        while True:
            try:
                urlopen(self.url, timeout=1).close()
                return
            except OSError as err:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"tools/serve.py did not start on {self.url}") from err
                time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class ThrottledProxy:
    """A localhost TCP proxy in front of ``upstream`` (a Server's URL) that sends the browser at most ``mbit`` megabits
    a second, all connections together, after ``latency_ms`` on each new connection: a reader's connection, for a
    first visit's timings.

    Why not Chromium's own network emulation (``Network.emulateNetworkConditions`` over the DevTools protocol): set
    on a page it slows the page's requests and its worker's, but not those of a worker that worker starts, which is
    where the model's chunks are fetched (runtime/model-worker.js): a real first visit measured with it fetched the
    model's 412 MB in 10-14 s "at 50 Mbit/s" (66 s at the least).
    """

    BLOCK = 16 * 1024

    def __init__(self, upstream: str, mbit: float, latency_ms: float = 20):
        target = urlparse(upstream)
        self.address = (target.hostname, target.port)
        self.rate = mbit * 1e6 / 8  # bytes a second
        self.latency = latency_ms / 1000
        self.lock = threading.Lock()
        self.next_free = 0.0
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                proxy.relay(self.request)

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def relay(self, client) -> None:
        time.sleep(self.latency)
        with socket.create_connection(self.address) as upstream:
            up = threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True)
            up.start()
            self._pump(upstream, client, True)
            up.join(timeout=1)

    def _pump(self, source, sink, throttled: bool) -> None:
        try:
            while data := source.recv(self.BLOCK):
                if throttled:
                    self._wait_for(len(data))
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _wait_for(self, size: int) -> None:
        """Sleep until ``size`` more bytes fit in the connection's rate (shared by every connection)."""
        with self.lock:
            now = time.monotonic()
            done = max(now, self.next_free) + size / self.rate
            self.next_free = done
        time.sleep(max(0.0, done - now))

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
