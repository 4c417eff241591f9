/**
 * Token ids back to text.
 *
 * A byte-level BPE token is a run of bytes, and a character (an emoji, a CJK ideograph) may be
 * split across tokens. Each id is mapped to its bytes (GPT-2's byte-to-unicode table, inverted;
 * added tokens are their own UTF-8 text) and the bytes are decoded together, so a character split
 * across tokens decodes whole (an unfinished one as U+FFFD). Streaming a run's text a piece at a time
 * is Python's (py/onepass/tokens.py, `Stream`), over this.
 */

/** GPT-2's table: every byte is written as a printable character in tokenizer.json's vocabulary. */
function unicodeToByte() {
  const printable = [];
  for (let b = 0x21; b <= 0x7e; b++) printable.push(b);
  for (let b = 0xa1; b <= 0xac; b++) printable.push(b);
  for (let b = 0xae; b <= 0xff; b++) printable.push(b);
  const table = new Map(printable.map((b) => [String.fromCodePoint(b), b]));
  let next = 0;
  for (let b = 0; b < 256; b++) {
    if (!printable.includes(b)) table.set(String.fromCodePoint(256 + next++), b);
  }
  return table;
}

export class ByteDecoder {
  constructor(tokenizerJson) {
    // A piece's bytes are worked out when its id is first decoded, not for the whole vocabulary ahead: that took as
    // long as building the tokenizer itself (benchmarks/FINDINGS.md, "The tokenizer's bytes on demand"). The added
    // tokens, a few dozen, are their own UTF-8 text, known at once.
    const encoder = new TextEncoder();
    this.bytes = new Map((tokenizerJson.added_tokens ?? []).map((added) => [added.id, encoder.encode(added.content)]));
    this.pieces = [];
    const vocab = tokenizerJson.model.vocab;
    for (const piece in vocab) this.pieces[vocab[piece]] = piece;
    this.toByte = unicodeToByte();
  }

  idBytes(id) {
    let bytes = this.bytes.get(id);
    if (bytes) return bytes;
    const piece = this.pieces[id];
    if (piece === undefined) throw new Error(`token id ${id} is not in the vocabulary`);
    bytes = Uint8Array.from(Array.from(piece), (ch) => this.toByte.get(ch));
    this.bytes.set(id, bytes);
    return bytes;
  }

  decode(ids) {
    const parts = ids.map((id) => this.idBytes(id));
    const bytes = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
    parts.reduce((offset, part) => (bytes.set(part, offset), offset + part.length), 0);
    return new TextDecoder('utf-8').decode(bytes);
  }
}
