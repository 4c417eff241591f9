/**
 * The ONNX side of the seam: the OnnxBridge beside the session, and the RemoteBridge that Python is handed.
 *
 * Python's browser backend (py/onepass/backends/browser.py) calls open/run/rollback (through a RemoteBridge,
 * below); the KV cache stays here, in JavaScript, and only token ids, argmax, top-k, timings and, when asked, the
 * model's features at the last positions of a pass (its `hidden` output, what a draft model reads) cross the
 * bridge. With the cache off a session keeps its ids and re-runs the whole text every pass. A `DraftBridge` runs
 * the draft model's small passes beside it (the site's manifest's `draft`).
 * Every name and shape comes from the export's manifest.
 *
 * The OnnxBridge runs in the model's worker (model-worker.js), beside the session; worker.js, where Python
 * runs, holds a RemoteBridge with the same calls, which it hands to Python instead.
 */
import { OnepassError } from './errors.js';

/**
 * @import { BridgeDraftStep, BridgePass, ErrorFields, ModelReply, ModelRequest, WriteChunk } from './contract.js'
 * @typedef {ModelRequest | WriteChunk} ChannelRequest what a WorkerChannel asks (the model's worker, the store worker)
 */

const int64 = (ort, values, dims) => new ort.Tensor('int64', BigInt64Array.from(values, BigInt), dims);

export class OnnxBridge {
  constructor(ort, onnx, manifest) {
    this.ort = ort;
    this.onnx = onnx;
    this.manifest = manifest;
    const kv = manifest.kv;
    const name = (format, i) => format.replaceAll('{i}', String(i));
    this.layers = Array.from({ length: kv.num_layers }, (_, i) => ({
      inKey: name(kv.input_key, i), inValue: name(kv.input_value, i),
      outKey: name(kv.output_key, i), outValue: name(kv.output_value, i),
    }));
    this.heads = kv.num_kv_heads;
    this.headDim = kv.head_dim;
    this.sessions = new Map();
    this.nextId = 1;
    this.cancelled = false;
  }

  /** A new session; `id` names it when the caller chooses (the RemoteBridge, across workers). */
  open(kvCache, id = this.nextId++) {
    this.sessions.set(id, { kvCache: Boolean(kvCache), past: null, ids: [], length: 0 });
    return id;
  }

  closeAll() {
    this.sessions.clear();
  }

  /**
   * One pass over `newIds` after the session's `start` tokens; predictions (argmax, top-k, the logits when
   * `wantLogits`) for newIds[rowsFrom:] only: the model skips its output layer for the rows before. `hidden`: the
   * model's features at the last `hidden` of newIds too, whatever rowsFrom is (a Float32Array, row by row).
   * @returns {Promise<BridgePass>}
   */
  async run(id, newIds, start, wantLogits, rowsFrom = 0, hidden = 0) {
    // A PyProxy argument lives only until this call returns its promise: copy it first.
    const ids = newIds?.toJs ? newIds.toJs() : Array.from(newIds);
    const session = this.sessions.get(id);
    if (!session) throw new Error(`no ONNX session ${id}`);
    if (start !== session.length) throw new Error(`session ${id} holds ${session.length} tokens, the pass starts at ${start}`);
    if (this.cancelled) throw new Error('cancelled');
    if (!(Number.isInteger(rowsFrom) && rowsFrom >= 0 && rowsFrom < ids.length)) throw new Error(`rowsFrom ${rowsFrom} is not one of the ${ids.length} new tokens`);
    if (!(Number.isInteger(hidden) && hidden >= 0 && hidden <= ids.length)) throw new Error(`hidden ${hidden} is not 0 to the ${ids.length} new tokens`);
    const fed = session.kvCache ? ids : [...session.ids, ...ids];
    const past = session.kvCache ? session.past : null;
    const from = session.kvCache ? session.length : 0;
    const { out, seconds, feedSeconds } = await this.pass(fed, from, past, session.kvCache, wantLogits,
      fed.length - ids.length + rowsFrom, hidden > 0);
    const kept = performance.now();
    if (session.kvCache) session.past = this.layers.map((l) => ({ key: out[l.outKey], value: out[l.outValue] }));
    session.ids.push(...ids);
    session.length += ids.length;
    // The KV cache's handling (feeds in, present tensors kept), timed apart from the model's run ("Under the hood").
    return { ...this.rows(out, seconds, wantLogits, hidden), kvSeconds: feedSeconds + (performance.now() - kept) / 1000 };
  }

  /**
   * The raw pass: `tokens` after `start` cached positions, predictions from row `firstRow` of the pass; its
   * outputs, the seconds of onnxruntime's run and the seconds spent building its feeds.
   */
  async pass(tokens, start, past, wantPresent, wantLogits, firstRow = 0, wantHidden = false) {
    const building = performance.now();
    const { ort, manifest } = this;
    const L = tokens.length;
    const inputs = manifest.inputs;
    const feeds = {
      [inputs.input_ids]: int64(ort, tokens, [1, L]),
      [inputs.attention_mask]: int64(ort, new Array(start + L).fill(1), [1, start + L]),
      [inputs.position_ids]: int64(ort, tokens.map((_, j) => start + j), [1, L]),
      [inputs.first_row]: int64(ort, [firstRow], [1]),
    };
    const empty = new ort.Tensor('float32', new Float32Array(0), [1, this.heads, 0, this.headDim]);
    this.layers.forEach((l, i) => {
      feeds[l.inKey] = past ? past[i].key : empty;
      feeds[l.inValue] = past ? past[i].value : empty;
    });
    const outputs = manifest.outputs;
    const fetches = [outputs.argmax, outputs.topk_ids, outputs.topk_probs];
    if (wantLogits) fetches.push(outputs.logits);
    if (wantHidden) {
      if (!outputs.hidden) throw new Error('this export has no hidden output (made before drafts existed): rebuild it');
      fetches.push(outputs.hidden);
    }
    if (wantPresent) fetches.push(...this.layers.flatMap((l) => [l.outKey, l.outValue]));
    const began = performance.now();
    const out = await this.onnx.run(feeds, fetches);
    return { out, seconds: (performance.now() - began) / 1000, feedSeconds: (began - building) / 1000 };
  }

  /**
   * A pass's predictions as plain arrays (top-k flattened row by row); the features of the pass's last `hidden`
   * rows (every fed row has one) as a Float32Array of their own, row by row, `hiddenSize` wide.
   */
  rows(out, seconds, wantLogits, hidden = 0) {
    const { outputs } = this.manifest;
    /** @type {Omit<BridgePass, 'kvSeconds'>} */
    const result = {
      argmax: Array.from(out[outputs.argmax].data, Number),
      topkIds: Array.from(out[outputs.topk_ids].data, Number),
      topkProbs: Array.from(out[outputs.topk_probs].data),
      k: outputs.top_k,
      seconds,
    };
    if (wantLogits) {
      result.vocab = out[outputs.logits].dims[2];
      result.logits = out[outputs.logits].data;
    }
    if (hidden) {
      const { dims, data } = out[outputs.hidden];
      const width = dims[2];
      result.hiddenSize = width;
      result.hidden = data.slice((dims[1] - hidden) * width); // its own buffer, to transfer
    }
    return result;
  }

  /** Forget every token after the first `length`; returns the seconds it took (the cache's cut). */
  rollback(id, length) {
    const began = performance.now();
    const session = this.sessions.get(id);
    if (!session || length >= session.length) return 0;
    session.ids.length = length;
    session.length = length;
    if (session.kvCache && session.past) {
      session.past = session.past.map(({ key, value }) => ({ key: this.cut(key, length), value: this.cut(value, length) }));
    }
    return (performance.now() - began) / 1000;
  }

  /** Keep the first `length` positions of a [1, heads, sequence, head_dim] tensor. */
  cut(tensor, length) {
    const [, heads, seq, dim] = tensor.dims;
    const kept = new Float32Array(heads * length * dim);
    for (let h = 0; h < heads; h++) kept.set(tensor.data.subarray(h * seq * dim, (h * seq + length) * dim), h * length * dim);
    return new this.ort.Tensor('float32', kept, [1, heads, length, dim]);
  }
}

/**
 * The draft model's small passes (a DraftModel, py/onepass/draft_model.py, run here as backends/native.py's
 * NativeDraft runs it natively): a pass reads the last n (feature, token) pairs, `features` [1, n, d] float32 and
 * `tokens` [1, n] int64, and answers with the last row's predicted `feature` and its `argmax` (a full-vocabulary
 * id) with its `confidence` (that token's probability); for sampling also the draft's `topK` most likely tokens
 * (its `probs` over the ids of its `vocab` output, the readout's subset of the vocabulary) and their probabilities:
 * its q. Stateless: nothing to roll back.
 */
export class DraftBridge {
  constructor(ort, onnx, draft, topK) {
    this.ort = ort;
    this.onnx = onnx;
    this.width = draft.hidden_size;
    this.topK = topK;
    this.cancelled = false;
  }

  /** @returns {Promise<BridgeDraftStep>} */
  async step(features, tokens, sampling) {
    if (this.cancelled) throw new Error('cancelled');
    const n = tokens.length;
    if (features.length !== n * this.width) throw new Error(`${n} tokens need ${n * this.width} feature values, got ${features.length}`);
    const feeds = {
      features: new this.ort.Tensor('float32', features instanceof Float32Array ? features : Float32Array.from(features), [1, n, this.width]),
      tokens: int64(this.ort, tokens, [1, n]),
    };
    const began = performance.now();
    const out = await this.onnx.run(feeds, sampling ? ['feature', 'argmax', 'confidence', 'probs', 'vocab'] : ['feature', 'argmax', 'confidence']);
    const seconds = (performance.now() - began) / 1000;
    /** @type {BridgeDraftStep} */
    const result = {
      feature: out.feature.data.slice((n - 1) * this.width),
      token: Number(out.argmax.data[n - 1]),
      seconds,
      confidence: out.confidence.data[n - 1],
    };
    if (sampling) Object.assign(result, this.top(out.probs.data.subarray((n - 1) * out.vocab.dims[0]), out.vocab.data));
    return result;
  }

  /** The `topK` most likely of the last row's `probs` (ties: the lower index first, as NativeDraft's stable sort). */
  top(probs, vocab) {
    const order = Array.from(probs.keys()).sort((a, b) => probs[b] - probs[a] || a - b).slice(0, this.topK);
    return { ids: order.map((i) => Number(vocab[i])), probs: order.map((i) => probs[i]) };
  }
}

/**
 * An error as plain fields that cross to another thread; the receiving WorkerChannel rebuilds it.
 * @returns {ErrorFields}
 */
const plainError = (err) => ({ message: String(err?.message ?? err), code: err?.code, retryable: err?.retryable });

/**
 * A worker's reply to request `id`: `work()`'s result as {id, type: 'done', result} (the buffers `transfer(result)`
 * names are moved, not copied), or its error as {id, type: 'error', error: describe(err)}. A message without an id
 * wanted no answer: its error is only logged. What a WorkerChannel, below, waits for.
 */
/**
 * @param {number | undefined} id
 * @param {() => *} work
 * @param {{describe?: (err: *) => ErrorFields, transfer?: (result: *) => Transferable[]}} [options]
 */
export async function reply(id, work, { describe = plainError, transfer = () => [] } = {}) {
  try {
    const result = await work();
    if (id !== undefined) self.postMessage({ id, type: 'done', result }, transfer(result));
  } catch (err) {
    const error = describe(err);
    if (id !== undefined) self.postMessage({ id, type: 'error', error });
    else console.error('onepass worker:', error.message);
  }
}

/**
 * Requests to a worker that answers them with reply(), above (model-worker.js, store-worker.js, worker.js),
 * and passes anything else it says about a request (progress, files) to that request's `onEvent`.
 */
export class WorkerChannel {
  /** @param {Worker} worker */
  constructor(worker) {
    this.worker = worker;
    this.pending = new Map();
    this.nextId = 1;
    /** @type {((err: Error) => void) | null} what to do once every waiting request has failed, if anything */
    this.onFail = null;
    /** @param {MessageEvent<ModelReply>} event */
    worker.onmessage = ({ data }) => {
      const request = this.pending.get(data.id);
      if (!request) return;
      if (data.type === 'done') request.resolve(data.result);
      else if (data.type === 'error') request.reject(data.error.code ? OnepassError.from(data.error) : new Error(data.error.message));
      else return request.onEvent(data);
      this.pending.delete(data.id);
    };
    // An error the worker did not catch (its script failed to load, or it died): every waiting request fails,
    // in words for the reader, with what the browser said as the detail.
    worker.onerror = (event) => {
      event.preventDefault?.();
      this.fail(new OnepassError('model', 'the model stopped in this tab: run again, or reload the page',
        { retryable: true, detail: event.message ?? 'the worker gave no reason' }));
    };
  }

  /**
   * `transfer`: buffers handed over to the worker rather than copied (they are then empty here).
   * @template {ChannelRequest['type']} T
   * @param {T} type
   * @param {Omit<Extract<ChannelRequest, {type: T}>, 'id' | 'type'>} fields
   * @param {(event: ModelReply) => void} [onEvent]
   * @param {Transferable[]} [transfer]
   * @returns {Promise<*>}
   */
  request(type, fields, onEvent = () => {}, transfer = []) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onEvent });
      this.worker.postMessage({ id, type, ...fields }, transfer);
    });
  }

  /**
   * A message that needs no answer; it is handled in order with the requests.
   * @template {ModelRequest['type']} T
   * @param {T} type
   * @param {Omit<Extract<ModelRequest, {type: T}>, 'type'>} fields
   */
  tell(type, fields) {
    this.worker.postMessage({ type, ...fields });
  }

  fail(err) {
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
    this.onFail?.(err);
  }
}

/**
 * The OnnxBridge's calls, made across to the model's worker: what worker.js hands to Python. `open`,
 * `rollback` and `closeAll` answer at once (the worker handles them in order before the next run), so a
 * rollback's seconds are counted in the next pass's `kvSeconds` there; `run` waits for the pass.
 */
export class RemoteBridge {
  constructor(channel) {
    this.channel = channel;
    this.nextId = 1;
    this.stopped = false;
  }

  /** The functions Python sees (py/onepass/backends/browser.py). */
  module() {
    return {
      open: (kvCache) => this.open(kvCache),
      run: (id, newIds, start, wantLogits, rowsFrom, hidden) => this.run(id, newIds, start, wantLogits, rowsFrom, hidden),
      rollback: (id, length) => this.rollback(id, length),
      draft: (features, tokens, sampling) => this.draft(features, tokens, sampling),
    };
  }

  /** The page's Cancel: the next pass, here or in the model's worker, throws 'cancelled'. */
  get cancelled() {
    return this.stopped;
  }

  set cancelled(value) {
    this.stopped = value;
    this.channel.tell('cancel', { cancelled: value });
  }

  open(kvCache) {
    const session = `remote-${this.nextId++}`;
    this.channel.tell('open', { session, kvCache: Boolean(kvCache) });
    return session;
  }

  /** @returns {Promise<BridgePass>} */
  async run(id, newIds, start, wantLogits, rowsFrom = 0, hidden = 0) {
    // A PyProxy argument lives only until this call returns its promise: copy it first.
    const ids = newIds?.toJs ? newIds.toJs() : Array.from(newIds);
    if (this.stopped) throw new Error('cancelled');
    return this.channel.request('run', { session: id, newIds: ids, start, wantLogits, rowsFrom, hidden: hidden ?? 0 });
  }

  /**
   * One small pass of the draft model: `features` flat, row by row (moved, not copied, to the model's worker).
   * @returns {Promise<BridgeDraftStep>}
   */
  async draft(features, tokens, sampling) {
    const flat = Float32Array.from(features?.toJs ? features.toJs() : features);
    const ids = tokens?.toJs ? tokens.toJs() : Array.from(tokens);
    if (this.stopped) throw new Error('cancelled');
    return this.channel.request('draftStep', { features: flat, tokens: ids, sampling: Boolean(sampling) }, () => {}, [flat.buffer]);
  }

  rollback(id, length) {
    this.channel.tell('rollback', { session: id, length });
    return 0;
  }

  closeAll() {
    this.channel.tell('closeAll', {});
  }
}
