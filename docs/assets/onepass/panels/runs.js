/**
 * The run every panel that runs the model goes through, and the frame of the panels that write text pass by pass.
 * (Step 6's sampling panel runs through it too: its preset draws need Python but not the model, `needsModel: false`.)
 *
 * `panelRunner` is the run: one at a time, never on an empty text, a repeat from the result cache, the precomputed
 * trace shown while the model downloads, the model's status with its retry, a clock in the status while a run goes
 * on, and a failure said in plain words (with `details`, on the "Under the hood" page, the runtime's own words
 * under them). The panel brings its request's kind and fields (the contract's: the runner builds the request, with
 * `request`, and runs it with the client's `run`), how to draw what comes back and, if it keeps more than the
 * result, how to run it live; so step 3's one pass, step 4's check, step 6's draws and the generating panels share
 * every rule above.
 *
 * `runFrame` frames the generating panels (steps 2 and 5, "Under the hood") around it: text, KV cache toggle, Run and
 * Cancel, the pass view, and the KV line that compares the last runs with the cache on and off (same passes,
 * different times). A live run is timed where it happens: the worker's `timing` of each pass, the page's own (from
 * the pass's message being sent to its row being drawn), and the run's wall time, for "Under the hood"'s breakdown.
 */
import { request as build, OnepassError, runtime } from '../runtime/client.js';
import { cachedOr } from './cache.js';
import { button, el, ms } from '../dom.js';
import { modelStatus, recordLastPass, traces } from './model.js';
import { PassView } from './passview.js';

/** @import { GenerateRequest, GenerateResult, LoadInfo, PassRow, Requests, Results, RunEvent } from '../runtime/contract.js' */
/**
 * A run live, as a panel may do it (execute's `live`): `asked`, the request built; `onEvent` takes the worker's events
 * (the clock's); `run(onEvent)`, the client's run of the request, resolves to its result; resolves to what is drawn
 * and cached.
 * @template {keyof Results} K
 * @template V
 * @callback Live
 * @param {Requests[K]} asked
 * @param {{onEvent: (event: RunEvent) => void, info: LoadInfo | null,
 *   run: (onEvent?: (event: RunEvent) => void) => Promise<Results[K]>}} context
 * @returns {Promise<V>}
 */
/** @typedef {{events: {pass: PassRow, text: string}[], result: GenerateResult}} Recording a generation as it came */
/**
 * A live run's times, in seconds: its wall time, and each pass's parts (the contract's TIMING, the page's own).
 * @typedef {{wall: number, passes: Object<string, number>[]}} Timing
 */

const TRACE_NOTE = 'A recorded run, made when this site was built, on the build machine: the same model and code as '
  + 'here, but the times are that machine\'s, not yours. Live runs replace it once the model has loaded.';

/** The note under a recorded run: TRACE_NOTE, and where and when it was recorded (hooks/traces.py stamps it). */
function recordedNote(trace) {
  const r = trace.recorded;
  if (!r || typeof r.machine !== 'string' || typeof r.date !== 'string') return TRACE_NOTE;
  return `${TRACE_NOTE} Recorded on ${r.date} with native onnxruntime on ${r.machine}, ${r.threads} thread(s).`;
}

/**
 * While a request runs, the status ticks every second ("Reading your 1,024-token text: 12 s…"), so a pass that
 * takes half a minute on the real model shows life. `event` takes the worker's 'started' and 'pass' events.
 */
/**
 * @param {(text: string) => void} say
 * @param {{reading?: (tokens: number) => string, writing?: (passes: number) => string,
 *   comparing?: (passes: number) => string}} [words]
 */
function runningClock(say, { reading = (n) => `Reading your ${n.toLocaleString('en')}-token text`,
  writing = (k) => `Writing: ${k} pass${k === 1 ? '' : 'es'} done`,
  comparing = (k) => `Now one at a time on the same text, to compare: ${k} pass${k === 1 ? '' : 'es'} done` } = {}) {
  let began = 0;
  let tokens = 0;
  let passes = 0;
  let baseline = 0;
  let timer = null;
  const show = () => say(`${baseline ? comparing(baseline) : passes ? writing(passes) : reading(tokens)}: `
    + `${Math.floor((performance.now() - began) / 1000)} s…`);
  return {
    /** @param {RunEvent} m */
    event(m) {
      if (m.type === 'started') {
        [began, tokens] = [performance.now(), m.tokens];
        timer = setInterval(show, 1000);
      } else if (m.type === 'pass' && m.baseline) {
        baseline += 1;
      } else if (m.type === 'pass') {
        passes += 1;
      } else {
        return;
      }
      show();
    },
    stop: () => clearInterval(timer),
  };
}

/**
 * @typedef {{busy?: string, running?: string, done?: string | ((value: *, request: Object<string, *>) => string),
 *   cached?: string, failed?: string, reading?: (tokens: number) => string}} Words
 */
/**
 * What a panel's runner says, unless its panel words it for itself (step 3 runs a pass, step 4 a check).
 * @type {Words}
 */
const WORDS = {
  busy: 'A run is already in progress: wait for it to finish, or press Cancel.',
  running: 'Running…',
  done: 'Done.',
  cached: 'From cache: this exact run was done before with this model, so it costs nothing now.',
  failed: 'The run failed',
};

/**
 * The run of the model panel in `root`, cached under `panel`. `words` replaces WORDS for this panel (and may word the
 * clock's `reading`, as runningClock takes it; `done` may be a function of the value and request); refusals go to
 * `notice` when the panel has one (it stays while a run goes on), else to the status line; `refuse(request)` is the
 * panel's own refusal, if any, after the empty text's; `cancel` is the panel's Cancel button; `eager: false` leaves
 * the model alone until a run needs it (modelStatus).
 * @param {HTMLElement} root
 * @param {{panel: string, words?: Words, notice?: HTMLElement | null, cancel?: HTMLButtonElement | null,
 *   details?: boolean, refuse?: (request: Object<string, *>) => string, eager?: boolean}} options
 */
export function panelRunner(root, { panel, words = {}, notice = null, cancel = null, details = false, refuse = () => '', eager = true }) {
  const rt = runtime();
  const model = modelStatus(root, { eager });
  const wording = { ...WORDS, ...words };
  const tell = notice ? (text) => { notice.textContent = text; } : model.say;
  const detail = el('pre', { className: 'onepass-detail-text' });
  const detailBox = details
    ? el('details', { className: 'onepass-detail', hidden: true }, [el('summary', { textContent: 'What the runtime said' }), detail])
    : null;
  let running = false;
  cancel?.addEventListener('click', () => rt.cancel());

  /** Whether a run goes on (the reader is told so): one at a time, since the worker runs one. */
  function busy() {
    if (running) tell(wording.busy);
    return running;
  }

  /** `work()`'s result, unless a run goes on or the request is refused (the reader is told why): then null. */
  async function exclusive(request, work) {
    if (busy()) return null;
    const empty = typeof request.text === 'string' && !request.text.trim();
    const refusal = empty ? 'The text is empty: type a few words first.' : refuse(request);
    if (refusal) {
      tell(refusal);
      return null;
    }
    running = true;
    try {
      return await work();
    } finally {
      running = false;
    }
  }

  /**
   * Build the `kind` request of `fields` and run it and draw it: from the cache unless `fresh`, else live, once the
   * model is ready (unless not `needsModel`), by `live(request, {onEvent, info, run})` (`onEvent` takes the worker's
   * events, for the clock; `run(onEvent)` is the client's run of this request), by default the client's run.
   * `start()` clears the last run's drawing once the run is accepted; `draw(value, fromCache)` draws what came back
   * (it may be async). Returns {value, fromCache}, or null when the run was refused or failed.
   * @template {keyof Results} K
   * @template [V=Results[K]]
   * @param {K} kind
   * @param {Partial<Requests[K]>} fields
   * @param {{live?: Live<K, V>, draw: (value: V, fromCache: boolean) => *, start?: () => void, fresh?: boolean,
   *   needsModel?: boolean}} options
   * @returns {Promise<{value: V, fromCache: boolean} | null>}
   */
  function execute(kind, fields, { live = /** @type {Live<K, *>} V: Results[K] */ ((asked, { onEvent, run }) => run(onEvent)),
    draw, start = () => {}, fresh = false, needsModel = true }) {
    const request = build(kind, fields);
    return exclusive(request, async () => {
      if (notice) notice.textContent = '';
      if (detailBox) detailBox.hidden = true;
      delete root.dataset.error;
      root.dataset.state = 'running';
      if (cancel) cancel.disabled = false;
      const clock = runningClock(model.say, { reading: wording.reading });
      try {
        start();
        const run = async () => {
          model.say(wording.running);
          const info = needsModel ? await model.ready() : null;
          // A run asked for while the model downloaded does not start once its page has been left.
          if (!root.isConnected) throw new OnepassError('cancelled', 'the run was cancelled: its page was left');
          return live(request, { onEvent: clock.event, info, run: (onEvent) => rt.run(kind, request, onEvent) });
        };
        const { value, fromCache } = fresh ? { value: await run(), fromCache: false } : await cachedOr(panel, request, run);
        await draw(value, fromCache);
        const done = typeof wording.done === 'function' ? wording.done(value, request) : wording.done;
        model.say(fromCache ? wording.cached : done);
        root.dataset.state = 'done';
        root.dataset.source = fromCache ? 'cache' : 'live';
        return { value, fromCache };
      } catch (err) {
        const cancelled = err.code === 'cancelled';
        model.say(cancelled ? 'Cancelled.' : `${wording.failed}: ${err.message}`);
        if (detailBox) {
          detail.textContent = err.detail ?? '';
          detailBox.hidden = !err.detail;
        }
        root.dataset.state = cancelled ? 'cancelled' : 'error';
        root.dataset.error = err.code ?? 'error';
        return null;
      } finally {
        clock.stop();
        if (cancel) cancel.disabled = true;
      }
    });
  }

  /**
   * While the model downloads, draw the default example's precomputed run (if the build made one) with
   * `draw(trace, note)`, `note` saying where and when it was recorded.
   */
  async function showTrace(key, draw) {
    const trace = (await traces())[key];
    // Once the model is here (a later page of the visit), the panel waits for a live run instead.
    if (!trace || root.dataset.source || rt.info) return null;
    draw(trace, recordedNote(trace));
    root.dataset.source = 'trace';
    return trace;
  }

  return { rt, model, detailBox, busy, exclusive, execute, showTrace, isRunning: () => running };
}

/** The generating panels' frame around a runner: the reader's `text`, the KV cache, Run and Cancel, the passes (`eager`: modelStatus's). */
export function runFrame(root, { panel, text, rows = 3, details = false, eager = true }) {
  const input = el('textarea', { className: 'onepass-text', rows, value: text, ariaLabel: 'Your text' });
  const kv = el('input', { type: 'checkbox', className: 'onepass-kv', checked: true });
  const run = button('Run', 'onepass-run', true);
  const cancel = button('Cancel', 'onepass-cancel');
  cancel.disabled = true;
  const notice = el('p', { className: 'onepass-notice', role: 'status' });
  const runner = panelRunner(root, { panel, notice, cancel, details, eager });
  const { model } = runner;
  const view = new PassView();
  const kvLine = el('p', { className: 'onepass-kvline' });
  const extra = el('div', { className: 'onepass-extra' });
  const controls = el('div', { className: 'onepass-controls' }, [el('label', {}, [kv, ' KV cache']), run, cancel, model.retry]);
  root.append(input, controls, model.status, notice, ...(details ? [runner.detailBox] : []), extra, view.node, kvLine);
  const byKv = new Map(); // the last run's totals with the cache on and off, for the same request otherwise

  /**
   * The passes of a whole run (a recording or a trace), drawn at once.
   * @param {Recording} recording
   */
  function replay({ events, result }) {
    for (const event of events) view.add(event.pass, event.text, result.labels);
    view.finish(result);
  }

  /**
   * Run `request` (cache first, unless `fresh`), draw it; returns {result, fromCache, timing} or null when refused or
   * failed. `timing` (a live run's) is {wall, passes: [{model, kv, bridge, python, page, drawing}]}, in seconds:
   * `page` from the pass's message sent (or the previous row drawn, if later: passes that queue up are not counted
   * twice) to its row drawn, `drawing` the part of it the page spent drawing. `shown`: the prompt as the run
   * sends it, drawn until the result says (step 6 sends the text as a chat turn).
   * @param {Partial<GenerateRequest>} fields
   * @param {{note?: string, fresh?: boolean, shown?: string}} [options]
   * @returns {Promise<{result: GenerateResult, fromCache: boolean, timing: Timing | null} | null>}
   */
  async function execute(fields, { note = '', fresh = false, shown = fields.text } = {}) {
    let timing = null;
    const request = build('generate', fields);
    const outcome = await runner.execute('generate', request, {
      fresh,
      start: () => view.reset(shown, note),
      live: async (asked, { onEvent, info }) => {
        const passes = [];
        let lastDrawn = -Infinity; // on the page's clock, in ms
        const began = performance.now();
        const recording = await record(asked, (m) => {
          const arrived = performance.now();
          onEvent(m);
          if (m.type !== 'pass' || m.baseline) return; // the one-at-a-time run a request compares with is not drawn
          view.add(m.pass, m.text, m.labels);
          // The page's part: from the worker posting the pass to its row drawn here, on the page's clock (the client
          // converts `sent` from the worker's, which Chromium sets apart: w3c/hr-time#115). The conversion can be off
          // by half a ping's round trip, a fraction of a ms when the worker is idle: never below nothing.
          const drawn = performance.now();
          const page = Math.max(0, performance.timeOrigin + drawn - Math.max(m.sent, lastDrawn)) / 1000;
          lastDrawn = performance.timeOrigin + drawn;
          if (m.pass.timing) passes.push({ ...m.pass.timing, page, drawing: (drawn - arrived) / 1000 });
        });
        timing = { wall: (performance.now() - began) / 1000, passes };
        recordLastPass(recording.result.passes, info);
        return recording;
      },
      draw: (recording, fromCache) => {
        // A live run's passes were drawn as they came; a cached one's are drawn now.
        if (fromCache) replay(recording);
        else view.finish(recording.result);
        showKv(request, recording.result);
      },
    });
    return outcome && { result: outcome.value.result, fromCache: outcome.fromCache, timing };
  }

  /**
   * @param {GenerateRequest} request
   * @param {GenerateResult} result
   */
  function showKv(request, result) {
    const same = JSON.stringify({ ...request, kvCache: null });
    for (const [k, entry] of byKv) if (entry.same !== same) byKv.delete(k);
    byKv.set(request.kvCache, { same, totals: result.totals });
    const part = (on) => {
      const t = byKv.get(on)?.totals;
      return `KV cache ${on ? 'on' : 'off'}: ${t ? `${t.passes} passes, ${ms(t.seconds)}` : 'not run yet'}`;
    };
    kvLine.textContent = `${part(true)} · ${part(false)}. The cache changes the time, never the passes or the text.`;
  }

  /** While the model downloads, the default example's precomputed run. */
  const showTrace = (key) => runner.showTrace(key, (trace, note) => {
    input.value = trace.request.text;
    view.reset(trace.request.text, note);
    replay(trace);
  });

  return { rt: runner.rt, model, input, kv, run, cancel, notice, view, extra, execute, showTrace, busy: runner.busy,
    isRunning: runner.isRunning };
}

/**
 * A live generation and its passes as they came, for the cache to replay; `onEvent` sees every event as it comes.
 * @param {GenerateRequest} request
 * @param {(event: RunEvent) => void} [onEvent]
 * @returns {Promise<Recording>}
 */
async function record(request, onEvent = () => {}) {
  const events = [];
  const result = await runtime().run('generate', request, (m) => {
    if (m.type === 'pass' && !m.baseline) events.push({ pass: m.pass, text: m.text });
    onEvent(m);
  });
  return { result, events };
}

/**
 * A generation that is compared or used, not drawn (step 5's greedy reference, step 4's own continuation): built
 * from `fields` as every request is, from the cache, or live.
 * @param {string} panel
 * @param {Partial<GenerateRequest>} fields
 * @returns {Promise<GenerateResult>}
 */
export async function quietRun(panel, fields) {
  const request = build('generate', fields);
  return (await cachedOr(panel, request, () => record(request))).value.result;
}
