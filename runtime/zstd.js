/**
 * zstd decompression of the model's chunks as they arrive (hooks/model.py compresses them): zstd's own decoder, built
 * to WebAssembly by the zstddec package (pinned in package.json; hooks/vendor.py writes its module out as
 * vendor/zstd/zstd.wasm, 59 KB). The browser's DecompressionStream has gzip only, and inflating the model with it took
 * 3.9 s of a first visit's two busy cores; this takes about a third of that (benchmarks/FINDINGS.md, "zstd instead of
 * gzip").
 *
 * One module per worker; each chunk in flight has a decoder of its own in it (a zstd context and two buffers), and
 * every call into it is synchronous, so chunks that arrive interleaved do not meet.
 */

const MODULE_URL = new URL('../../../vendor/zstd/zstd.wasm', import.meta.url);
// What a decoder takes and hands on at a time: the network's reads copied in, its output copied out. Fixed, so the
// module's memory stays a few MB a chunk in flight, however large a read (it never shrinks once grown).
const IN_BYTES = 1 << 20;
const OUT_BYTES = 1 << 20;
// zstd's errors come back as size_t values above -120 (ZSTD_isError); WebAssembly returns them as negative numbers.
const isError = (code) => code < 0;

/** zstd's four magic bytes, which start every frame (and no plain piece of a served file: hooks/model.py). */
export const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

export class ZstdError extends Error {}

let started = null;

/** The decoder's module, instantiated once per worker. */
function decoderModule() {
  started ??= fetch(MODULE_URL)
    .then((response) => {
      if (!response.ok) throw new Error(`${MODULE_URL} answered ${response.status}`);
      return response.arrayBuffer();
    })
    .then((bytes) => WebAssembly.instantiate(bytes, { env: { emscripten_notify_memory_growth() {} } }))
    .then(({ instance }) => instance.exports)
    .catch((err) => {
      started = null; // a retry fetches it again
      throw err;
    });
  return started;
}

/**
 * A zstd stream's decoder: `push` each piece of the compressed bytes as it comes, `end` once they are all here,
 * `free` whatever happened. Damaged bytes throw a ZstdError.
 */
export class ZstdDecoder {
  static async create() {
    return new ZstdDecoder(await decoderModule());
  }

  constructor(zstd) {
    this.zstd = zstd;
    this.context = zstd.ZSTD_createDCtx();
    this.out = zstd.malloc(OUT_BYTES);
    this.buffers = zstd.malloc(24); // ZSTD_inBuffer then ZSTD_outBuffer: { pointer, size, position }, 32-bit each
    this.input = zstd.malloc(IN_BYTES);
    this.last = 0; // zstd's last answer: 0 once a frame has ended
  }

  /** Decompress `bytes`, handing each run of output to `onOutput` as a view that is valid only until it returns. */
  push(bytes, onOutput) {
    for (let start = 0; start < bytes.byteLength; start += IN_BYTES) {
      this.pushPart(bytes.subarray(start, start + IN_BYTES), onOutput);
    }
  }

  pushPart(bytes, onOutput) {
    const { zstd } = this;
    new Uint8Array(zstd.memory.buffer, this.input, bytes.byteLength).set(bytes);
    // The module's memory may grow during a call, which detaches every view of it: views are made afresh each time.
    const fields = () => new Uint32Array(zstd.memory.buffer, this.buffers, 6);
    fields().set([this.input, bytes.byteLength, 0]);
    for (;;) {
      fields().set([this.out, OUT_BYTES, 0], 3);
      this.last = zstd.ZSTD_decompressStream(this.context, this.buffers + 12, this.buffers);
      if (isError(this.last)) throw new ZstdError(`zstd error ${-this.last}`);
      const [, size, read, , , produced] = fields();
      if (produced) onOutput(new Uint8Array(zstd.memory.buffer, this.out, produced));
      // Done with this part once all of it is read and the output was not full (a full one may have more behind it).
      if (read === size && produced < OUT_BYTES) return;
    }
  }

  /** Throws if the bytes pushed stop in the middle of a frame. */
  end() {
    if (this.last !== 0) throw new ZstdError('the compressed bytes stop before their end');
  }

  free() {
    const { zstd } = this;
    zstd.ZSTD_freeDCtx(this.context);
    zstd.free(this.out);
    zstd.free(this.buffers);
    zstd.free(this.input);
  }
}
