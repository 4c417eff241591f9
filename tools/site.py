"""The built site, served on localhost and opened in Debian's Chromium: shared by the browser tests
(tests/browser.py), the benchmarks and the screenshots, which must all see the same site the same way.
"""

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
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


def build_site(model_dir: Path, site_dir: Path, chunk_mb: str = TEST_CHUNK_MB) -> Path:
    env = {**os.environ, "ONEPASS_MODEL_DIR": str(model_dir), "ONEPASS_CHUNK_MB": chunk_mb, "NO_MKDOCS_2_WARNING": "1"}
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site_dir)],
                   cwd=ROOT, env=env, check=True)
    return site_dir


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    """tools/serve.py over a folder, on a free localhost port (none of site/_headers when ``isolation`` is off)."""

    def __init__(self, folder: Path, isolation: bool = True):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        flags = [] if isolation else ["--no-isolation"]
        self.process = subprocess.Popen([sys.executable, str(ROOT / "tools" / "serve.py"), "--dir", str(folder),
                                         "--port", str(self.port), *flags],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                urlopen(self.url, timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    self.stop()
                    raise RuntimeError(f"tools/serve.py did not start on {self.url}")
                time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
