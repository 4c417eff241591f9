"""Model loading in Chromium: chunks checked, cached for the next visit, clear retryable errors."""

import functools
import gzip
import hashlib
import json
import os
import shutil
import socket
import threading
import time
from collections import Counter
from contextlib import contextmanager
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import zstandard

from benchmarks.bench_browser import served_as, served_uncompressed
from hooks.model import ZSTD_MAGIC, compress, decompress, served_files
from tests.browser import CONSENTED, Server, build_site, offline_page, stored_chunks

pytest_plugins = ["tests.browser"]  # the browser fixtures, registered once for the whole session

ZSTD_FRAME = 12  # zstd's frame and block headers, which a file too small to shrink still pays
LOAD = "() => window.onepass().load().then(() => 'loaded', (e) => ({code: e.code, message: e.message, retryable: e.retryable}))"


def chunks(site) -> list[dict]:
    manifest = json.loads((site / "model" / "manifest.json").read_text())
    return [chunk for entry in served_files(manifest) for chunk in entry["chunks"]]


def open_page(page, server):
    page.goto(server.url + "runtime/")
    page.wait_for_function("() => window.onepass !== undefined")


@contextmanager
def own_copy(chromium, tiny_site, tmp_path, consent: bool = True):
    """A copy of the tiny site for a test to change, served on a port of its own, and a fresh page with no service
    worker: (the copy's folder, the page, the server)."""
    site = tmp_path / "site"
    shutil.copytree(tiny_site, site)
    server = Server(site)
    context, page, outside = offline_page(chromium, consent=consent, service_workers="block")
    try:
        yield site, page, server
    finally:
        context.close()
        server.stop()
    assert outside == []


def test_the_site_ships_chunks_the_manifest_lists(tiny_site, tiny_export, tiny_draft):
    listed = chunks(tiny_site)
    assert len(listed) > 2  # the tests build with small chunks
    for chunk in listed:
        # Served zstd-compressed, named and hashed by the bytes they decompress to (a file of a hundred bytes, such
        # as the tiny draft's empty table of answers, may not shrink: zstd's headers take 9 to 12 bytes).
        packed = (tiny_site / "model" / chunk["name"]).read_bytes()
        assert len(packed) == chunk["download_size"] <= chunk["size"] + ZSTD_FRAME
        plain = decompress(packed)
        assert len(plain) == chunk["size"] and hashlib.sha256(plain).hexdigest() == chunk["sha256"]
        assert chunk["name"] == f"chunks/{chunk['sha256']}.zst" and plain[:4] != ZSTD_MAGIC
    source = json.loads((tiny_export / "manifest.json").read_text())
    shipped = json.loads((tiny_site / "model" / "manifest.json").read_text())
    for entry, original in zip(shipped["files"], source["files"]):
        assert sum(c["size"] for c in entry["chunks"]) == original["size"]
        assert entry["download_size"] == sum(c["download_size"] for c in entry["chunks"])
        assert {k: v for k, v in entry.items() if k not in ("chunks", "download_size")} == original
    assert shipped["model_download_size"] == sum(entry["download_size"] for entry in shipped["files"])
    assert sum(chunk["download_size"] for chunk in listed) < sum(chunk["size"] for chunk in listed)
    # The draft model in the same chunks, after the model's, and counted in the download the reader is asked about.
    draft = json.loads((tiny_draft / "draft.json").read_text())
    assert [{k: v for k, v in entry.items() if k not in ("chunks", "download_size")} for entry in shipped["draft"]["files"]] \
        == draft["files"]
    assert shipped["draft"]["window"] == draft["window"] and shipped["draft"]["target"] == draft["target"]
    assert shipped["download_size"] == shipped["model_download_size"] + shipped["draft"]["download_size"]


def test_a_missing_chunk_is_a_clear_retryable_error(page, tiny_server, tiny_site):
    name = chunks(tiny_site)[1]["name"]
    page.route(f"**/model/{name}", lambda route: route.fulfill(status=404, body="not here"))
    open_page(page, tiny_server)
    error = page.evaluate(LOAD)
    assert error["code"] == "not_found" and error["retryable"] and name in error["message"]
    page.wait_for_selector("[data-onepass-panel][data-state=error]")
    assert "could not be loaded" in page.inner_text(".onepass-status")
    page.unroute(f"**/model/{name}")
    assert page.evaluate(LOAD) == "loaded"  # the retry succeeds


def test_a_damaged_chunk_fails_its_hash(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[1]
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=b"\0" * chunk["size"]))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD)["code"] == "hash_mismatch"


def test_a_compressed_chunk_that_decompresses_to_the_wrong_bytes_fails_its_hash(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[1]
    body = zstandard.ZstdCompressor().compress(b"\0" * chunk["size"])
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=body))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD)["code"] == "hash_mismatch"


def test_a_compressed_chunk_that_does_not_decompress_is_damaged(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[1]
    packed = bytearray((tiny_site / "model" / chunk["name"]).read_bytes())
    packed[4] |= 0x08  # the frame header's reserved bit, which a decoder must refuse
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=bytes(packed)))
    open_page(page, tiny_server)
    error = page.evaluate(LOAD)
    assert error["code"] == "hash_mismatch" and error["retryable"] and chunk["name"] in error["message"], error
    assert "does not decompress" in error["message"]


def test_a_compressed_chunk_cut_short_is_damaged(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[1]
    packed = (tiny_site / "model" / chunk["name"]).read_bytes()
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=packed[:len(packed) // 2]))
    open_page(page, tiny_server)
    error = page.evaluate(LOAD)
    assert error["code"] == "truncated" and error["retryable"] and chunk["name"] in error["message"], error


def test_a_truncated_chunk_is_reported(page, tiny_server, tiny_site):
    chunk = chunks(tiny_site)[0]
    page.route(f"**/model/{chunk['name']}", lambda route: route.fulfill(status=200, body=b"\0" * (chunk["size"] // 2)))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD)["code"] == "truncated"


def test_the_second_visit_loads_from_the_cache(page, tiny_server, tiny_site):
    served = {chunk["name"] for chunk in chunks(tiny_site)}
    open_page(page, tiny_server)
    assert page.evaluate(LOAD) == "loaded"
    fetched = []
    page.on("request", lambda request: "/model/" in request.url and fetched.append(request.url.rsplit("/", 1)[1]))
    open_page(page, tiny_server)
    assert page.evaluate(LOAD) == "loaded"
    # The manifest is asked again (the model card reads it too), the chunks are not.
    assert "manifest.json" in fetched and not served & set(fetched)
    # One OPFS folder holds the model, as files named by the chunks' hashes; the Cache API holds none of it.
    assert stored_chunks(page) == served
    assert not [name for name in page.evaluate("() => caches.keys()") if name.startswith("onepass-model")]


def test_chunks_an_older_build_kept_in_the_cache_api_move_to_opfs_without_a_download(chromium, tiny_server, tiny_site):
    served = {chunk["name"] for chunk in chunks(tiny_site)}
    # Not agreed to the download, so the model card does not start one: the load below is the only one.
    context, page, outside = offline_page(chromium, consent=False)
    try:
        open_page(page, tiny_server)
        # Where the model was before this store: the Cache API, keyed by each chunk's URL, holding its plain bytes.
        page.evaluate("""(names) => caches.open('onepass-model').then((cache) => Promise.all(names.map(async (name) => {
            const url = new URL('../model/' + name, document.baseURI).href;
            const { ZstdDecoder } = await import(new URL('../assets/onepass/runtime/zstd.js', document.baseURI).href);
            const decoder = await ZstdDecoder.create();
            const plain = [];
            decoder.push(new Uint8Array(await (await fetch(url)).arrayBuffer()), (bytes) => plain.push(bytes.slice()));
            decoder.free();
            await cache.put(url, new Response(new Blob(plain)));
        })))""", sorted(served))
        assert stored_chunks(page) == set()
        fetched = []
        page.on("request", lambda request: "/model/chunks/" in request.url and fetched.append(request.url))
        assert page.evaluate(LOAD) == "loaded"
        assert fetched == [] and stored_chunks(page) == served
        assert "onepass-model" not in page.evaluate("() => caches.keys()")
    finally:
        context.close()
    assert outside == []


def test_where_opfs_is_refused_the_model_is_kept_in_the_cache_api(chromium, tiny_site, tmp_path):
    # A private window may refuse OPFS to the model's worker: the chunks then go to the Cache API, and a returning
    # visit reads them from there without a download.
    kept = """() => caches.open('onepass-model').then((cache) => cache.keys())
        .then((requests) => requests.map((request) => request.url.split('/model/')[1]))"""
    with own_copy(chromium, tiny_site, tmp_path) as (site, page, server):
        script = site / "assets" / "onepass" / "runtime" / "model-worker.js"
        refused = "StorageManager.prototype.getDirectory = () => Promise.reject(new DOMException('refused', 'SecurityError'));\n"
        script.write_text(refused + script.read_text())
        open_page(page, server)
        assert page.evaluate(LOAD) == "loaded"
        assert set(page.evaluate(kept)) == {chunk["name"] for chunk in chunks(site)} and stored_chunks(page) == set()
        fetched = []
        page.on("request", lambda request: "/model/chunks/" in request.url and fetched.append(request.url))
        open_page(page, server)
        assert page.evaluate(LOAD) == "loaded"
        assert fetched == []
        assert page.evaluate("() => window.onepass().run('generate', {text: 'Hello', maxNew: 3})")["tokens"]


def test_a_model_worker_that_fails_to_start_is_a_plain_retryable_error(chromium, tiny_site, tmp_path):
    # A site whose model worker throws as it starts (Playwright's routes do not see a worker's own workers).
    with own_copy(chromium, tiny_site, tmp_path, consent=False) as (site, page, server):
        script = site / "assets" / "onepass" / "runtime" / "model-worker.js"
        good = script.read_text()
        script.write_text("throw new Error('raw words the reader must not see');\n")
        open_page(page, server)
        error = page.evaluate(LOAD)
        assert error["code"] == "model" and error["retryable"] and "reload the page" in error["message"]
        assert "raw words" not in error["message"]
        script.write_text(good)
        assert page.evaluate(LOAD) == "loaded"


def test_a_store_worker_that_fails_to_start_still_loads_the_model(chromium, tiny_site, tmp_path):
    # The worker that writes downloaded chunks into OPFS (runtime/store-worker.js) throws as it starts: the chunks it
    # was handed are not kept (a later visit fetches them again) and the rest are written on the model worker's thread.
    with own_copy(chromium, tiny_site, tmp_path) as (site, page, server):
        script = site / "assets" / "onepass" / "runtime" / "store-worker.js"
        script.write_text("throw new Error('raw words the reader must not see');\n")
        for _ in range(2):  # a first visit, then a returning one that fetches what was not kept
            open_page(page, server)
            assert page.evaluate(LOAD) == "loaded"
            assert page.evaluate("() => window.onepass().load()")["chunksKeptApart"] == 0
        assert stored_chunks(page) <= {chunk["name"] for chunk in chunks(site)}


def test_a_broken_python_snapshot_falls_back_to_a_plain_start(chromium, tiny_site, tmp_path):
    # The snapshot only saves time: one that cannot be restored must not reach the reader as an error.
    errors = []
    with own_copy(chromium, tiny_site, tmp_path) as (site, page, server):
        runtime = json.loads((site / "vendor" / "runtime.json").read_text())
        (site / "vendor" / runtime["snapshot"]["name"]).write_bytes(gzip.compress(b"not a snapshot" * 1000))
        page.on("pageerror", lambda err: errors.append(str(err)))
        open_page(page, server)
        info = page.evaluate("() => window.onepass().load()")
        assert info["pythonSnapshot"] is False
        result = page.evaluate("() => window.onepass().run('generate', {text: 'Hello', maxNew: 3})")
        assert result["tokens"]
    assert errors == []


def test_a_failing_manifest_is_named_and_retryable_not_a_missing_model(chromium, tiny_server):
    context, page, outside = offline_page(chromium, service_workers="block")
    try:
        page.route("**/model/manifest.json", lambda route: route.fulfill(status=500, body="oops"))
        page.goto(tiny_server.url + "one-at-a-time/")
        page.wait_for_selector("[data-onepass-panel=model-card][data-state=error]")
        card = page.inner_text("[data-onepass-panel=model-card]")
        assert "manifest" in card and "500" in card and "built without a model" not in card
        error = page.evaluate(LOAD)
        assert error["code"] == "network" and error["retryable"] and "manifest" in error["message"]
        page.unroute("**/model/manifest.json")
        page.click("[data-onepass-panel=model-card] .onepass-retry")
        page.wait_for_selector("[data-onepass-panel=model-card][data-state=ready]")
    finally:
        context.close()
    assert outside == []


class DroppingHandler(SimpleHTTPRequestHandler):
    """Serves the site like a plain host, but the chunk named in `drop` breaks off halfway, after promising its
    whole length: a connection lost mid-download. `asked` records each chunk request's Cache-Control header, and
    `times` how often each chunk was asked for; each chunk (or only the one named `slow_chunk`) waits `slow` seconds
    before it is sent. With `encoded`, the chunks are sent with that Content-Encoding, as some hosts send a .zst file
    (or one they compressed again), so the browser decompresses them before the loader sees them."""

    drop: str = ""
    asked: dict = {}
    times: Counter = Counter()
    slow: float = 0
    slow_chunk: str = ""
    encoded: str = ""

    def end_headers(self):
        if self.encoded and "/model/chunks/" in self.path:
            self.send_header("Content-Encoding", self.encoded)
        super().end_headers()

    def send_head(self):
        if "/model/chunks/" in self.path:
            self.asked[self.path] = self.headers.get("Cache-Control")
            self.times[self.path] += 1
            if self.path.endswith(self.slow_chunk):
                time.sleep(self.slow)
        return super().send_head()

    def copyfile(self, source, outputfile):
        if self.drop and self.path.endswith(self.drop):
            outputfile.write(source.read(os.fstat(source.fileno()).st_size // 2))
            outputfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        super().copyfile(source, outputfile)

    def log_message(self, *args):
        pass


@contextmanager
def plain_host(site, drop: str = "", slow: float = 0, slow_chunk: str = "", encoded: str = ""):
    """`site` served by DroppingHandler on a free localhost port (breaking off the chunk named `drop`, if any)."""
    DroppingHandler.drop, DroppingHandler.asked, DroppingHandler.times = drop, {}, Counter()
    DroppingHandler.slow, DroppingHandler.slow_chunk, DroppingHandler.encoded = slow, slow_chunk, encoded
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(DroppingHandler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield SimpleNamespace(url=f"http://127.0.0.1:{server.server_address[1]}/")
    finally:
        server.shutdown()


def test_a_connection_dropped_mid_chunk_names_the_file_and_the_retry_resumes(chromium, tiny_site):
    name = chunks(tiny_site)[1]["name"]
    with plain_host(tiny_site, drop=name) as server:
        context, page, outside = offline_page(chromium, service_workers="block")
        try:
            open_page(page, server)
            error = page.evaluate(LOAD)
            assert error["code"] == "network" and error["retryable"], error
            assert "connection dropped" in error["message"] and name in error["message"] and "part 2 of" in error["message"]
            DroppingHandler.drop = ""
            assert page.evaluate(LOAD) == "loaded"
        finally:
            context.close()
    assert outside == []


def test_chunks_kept_in_the_store_are_not_kept_again_by_the_http_cache(chromium, tiny_site):
    # fetch's cache: 'no-store', which the fetch standard sends as Cache-Control: no-cache, so the model's bytes are
    # written to disk once (OPFS), not twice: that saved about 0.9 s of a first visit on the real model.
    with plain_host(tiny_site) as server:
        # A plain context: Playwright's routing (offline_page's guard) turns the HTTP cache off, and with it says no-cache.
        context = chromium.new_context(service_workers="block")
        context.add_init_script(CONSENTED)
        page = context.new_page()
        try:
            open_page(page, server)
            assert page.evaluate(LOAD) == "loaded"
            assert stored_chunks(page) == {chunk["name"] for chunk in chunks(tiny_site)}
        finally:
            context.close()
    assert len(DroppingHandler.asked) == len(chunks(tiny_site))
    assert set(DroppingHandler.asked.values()) == {"no-cache"}, DroppingHandler.asked


def test_two_tabs_loading_at_once_download_each_chunk_once(chromium, tiny_site):
    # A reader opening two of the lesson's pages at once on a first visit: the second tab waits for the first's
    # chunks and reads them from the store, rather than download the model (634 MB) a second time. Each chunk takes
    # 3 s to arrive, so the two tabs' loads overlap however long each takes to start.
    with plain_host(tiny_site, slow=3) as server:
        context, first, outside = offline_page(chromium, service_workers="block")
        second = context.new_page()
        try:
            for page in (first, second):
                open_page(page, server)
            for page in (first, second):
                page.evaluate(f"() => {{ window.loaded = ({LOAD})(); }}")
            assert [page.evaluate("window.loaded") for page in (first, second)] == ["loaded", "loaded"]
            assert stored_chunks(second) == {chunk["name"] for chunk in chunks(tiny_site)}
        finally:
            context.close()
    assert outside == []
    assert DroppingHandler.times == Counter({f"/model/{chunk['name']}": 1 for chunk in chunks(tiny_site)})


def test_a_tab_waiting_for_another_tabs_download_says_so_and_its_run_is_not_taken_for_hung(chromium, tiny_site):
    # The tokenizer's chunk, the first asked for, takes 12 s to arrive. The second tab opens while the first tab
    # downloads it, and waits for it, hearing no bytes: its run, waiting for the model, must not be taken for a
    # hung worker (here after 5 s of silence, 120 s on the site), and its model card says why it waits. (3 s was
    # too short on a busy machine: the run itself, once the model came, stayed silent that long once.)
    manifest = json.loads((tiny_site / "model" / "manifest.json").read_text())
    tokenizer_chunk = next(entry for entry in manifest["files"] if entry["name"] == "tokenizer.json")["chunks"][0]["name"]
    with plain_host(tiny_site, slow=12, slow_chunk=tokenizer_chunk) as server:
        context, first, outside = offline_page(chromium, service_workers="block")
        second = context.new_page()
        try:
            open_page(first, server)
            first.evaluate(f"() => {{ window.loaded = ({LOAD})(); }}")
            deadline = time.monotonic() + 30
            while not DroppingHandler.times and time.monotonic() < deadline:
                first.wait_for_timeout(50)  # not time.sleep: the pages' requests pass through this process's routes
            assert DroppingHandler.times, "the first tab never asked for a chunk"
            open_page(second, server)
            # Python started first: a busy machine may take more than 5 s to start it, a wait this test is not about.
            second.evaluate("""async () => {
                const rt = window.onepass();
                await rt.python();
                rt.silentMs = 5000;
                window.ran = rt.run('generate', {text: 'one two', maxNew: 2}).then(() => 'ran', (e) => e.code);
            }""")
            second.wait_for_function(
                "() => document.querySelector('.onepass-card-progress')?.textContent.includes('another tab is downloading')")
            assert second.evaluate("window.ran") == "ran"
            assert first.evaluate("window.loaded") == "loaded"
        finally:
            context.close()
    assert outside == []
    assert DroppingHandler.times == Counter({f"/model/{chunk['name']}": 1 for chunk in chunks(tiny_site)})


def load_counting_chunks(chromium, server, context=None) -> tuple[object, list]:
    """A first load of the model from `server` in a fresh page (of `context`, else a context of its own): the page and
    the chunk requests it made."""
    if context is None:
        context, _, _ = offline_page(chromium, service_workers="block")
    page = context.new_page()
    fetched = []
    page.on("request", lambda request: "/model/chunks/" in request.url and fetched.append(request.url.split("/model/")[1]))
    open_page(page, server)
    assert page.evaluate(LOAD) == "loaded"
    return page, fetched


def test_where_the_host_sends_the_chunks_with_content_encoding_zstd_the_plain_bytes_load(chromium, tiny_site):
    # The browser undoes the host's Content-Encoding, so the loader receives plain bytes: the same sha256 checks them.
    with plain_host(tiny_site, encoded="zstd") as server:
        page, fetched = load_counting_chunks(chromium, server)
        try:
            assert sorted(fetched) == sorted(chunk["name"] for chunk in chunks(tiny_site))
            assert stored_chunks(page) == {chunk["name"] for chunk in chunks(tiny_site)}
            assert page.evaluate("() => window.onepass().run('generate', {text: 'Hello', maxNew: 3})")["tokens"]
        finally:
            page.context.close()


def load_repacked(chromium, tiny_site, tmp_path, repack, encoded: str = "") -> None:
    """A copy of the tiny site whose chunks ``repack`` rewrote in place (bench_browser's ``served_as`` and its
    kind), served with ``encoded`` as its Content-Encoding: every chunk is fetched and kept."""
    site = tmp_path / "site"
    shutil.copytree(tiny_site, site)
    repack(site)
    with plain_host(site, encoded=encoded) as server:
        page, fetched = load_counting_chunks(chromium, server)
        try:
            assert len(fetched) == len(chunks(site))
            assert stored_chunks(page) == {chunk["name"] for chunk in chunks(site)}
        finally:
            page.context.close()


def test_where_the_host_compresses_the_chunks_again_with_gzip_they_load(chromium, tiny_site, tmp_path):
    # A host that gzips every file and says so: the browser undoes its gzip, the loader its zstd.
    def gzip_again(site):
        served_as(site, lambda plain: gzip.compress(compress(plain), mtime=0))

    load_repacked(chromium, tiny_site, tmp_path, gzip_again, encoded="gzip")


def test_where_the_host_serves_the_chunks_uncompressed_they_load(chromium, tiny_site, tmp_path):
    # A host that stores or recompresses the chunks its own way hands over plain bytes under the same names; the
    # benchmark's baseline serves them so too (the very function, so tests/test_bench_download.py loads no page).
    load_repacked(chromium, tiny_site, tmp_path, served_uncompressed)


# The size of each file in the page's model store (an OPFS folder of chunks named by their sha256).
STORED_SIZES = """async () => {
  const folder = await (await navigator.storage.getDirectory()).getDirectoryHandle('onepass-model', {create: true});
  const sizes = {};
  for await (const [name, handle] of folder.entries()) sizes['chunks/' + name] = (await handle.getFile()).size;
  return sizes;
}"""


def whole_chunks(page, served: dict) -> set:
    """The chunks the browser keeps at their served size (``served``: name -> size)."""
    return {name for name, size in page.evaluate(STORED_SIZES).items() if served.get(name) == size}


def test_a_first_visit_closed_at_sixty_percent_resumes_from_the_kept_chunks(chromium, tiny_export, tmp_path):
    # A reader closes the tab partway through the first download; the next visit fetches only the chunks not kept.
    site = build_site(tiny_export, tmp_path / "site", chunk_mb="1")  # about 20 chunks, so 60 % falls between two
    served = {chunk["name"]: chunk["size"] for chunk in chunks(site)}
    with plain_host(site, slow=0.25) as server:
        context, page, outside = offline_page(chromium, service_workers="block")
        try:
            open_page(page, server)
            page.evaluate(f"() => {{ window.loaded = ({LOAD})(); }}")
            deadline = time.monotonic() + 120
            # Chunks kept whole (a name alone may be a chunk still being written when the tab closes).
            while len(whole_chunks(page, served)) < 0.6 * len(served) and time.monotonic() < deadline:
                page.wait_for_timeout(50)
            page.close()
            first = Counter(DroppingHandler.times)
            probe = context.new_page()
            probe.goto(server.url + "runtime/")
            kept = whole_chunks(probe, served)
            probe.close()
            assert 0.6 * len(served) <= len(kept) < len(served), (len(kept), len(served))
            DroppingHandler.times.clear()
            page, fetched = load_counting_chunks(chromium, server, context)
            assert sorted(fetched) == sorted(set(served) - kept)
            assert stored_chunks(page) == set(served)
        finally:
            context.close()
    assert outside == []
    # A kept chunk came once over both visits; the second visit asked for each of the rest once.
    assert all(first[f"/model/{name}"] == 1 for name in kept) and set(DroppingHandler.times.values()) == {1}


SAVE_DATA = """Object.defineProperty(Navigator.prototype, 'connection', {
  configurable: true, get: () => ({ saveData: true, effectiveType: '4g', addEventListener() {} }) });"""


def test_where_the_connection_saves_data_the_consent_question_says_so_before_the_download(chromium, tiny_server):
    for save_data in (True, False):
        context, page, outside = offline_page(chromium, consent=False, service_workers="block")
        try:
            if save_data:
                context.add_init_script(SAVE_DATA)
            page.goto(tiny_server.url + "one-at-a-time/")
            for question in ("[data-onepass-panel=greedy] .onepass-status", "[data-onepass-panel=model-card]"):
                page.wait_for_selector(f"{question} .onepass-download")
                text = page.inner_text(question)
                note = text.find("saves data")
                assert (note != -1) == save_data, text
                if save_data:
                    assert note < text.find("Download the model")
        finally:
            context.close()
        assert outside == []
