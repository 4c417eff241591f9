/**
 * The frame every generating panel shares: text, KV cache toggle, Run and Cancel, the model's status, the
 * pass view, the result cache, the precomputed trace shown while the model downloads, the KV line that
 * compares the last runs with the cache on and off (same passes, different times), and a clock in the status
 * while a run goes on. A failed run says what went wrong in plain words; with `details` (the "Under the hood"
 * page) the runtime's own words are shown under it as well. A live run is timed where it happens: the worker's
 * `timing` of each pass, the page's own (from the pass's message being sent to its row being drawn), and the run's
 * wall time, for "Under the hood"'s breakdown.
 */
import { runtime } from '../runtime/client.js';
import { cachedOr } from './cache.js';
import { button, el, ms } from './dom.js';
import { modelStatus, recordLastPass, traces } from './model.js';
import { PassView } from './passview.js';

export const TRACE_NOTE = 'A recorded run, made when this site was built, on the build machine: the same model and code as '
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
export function runningClock(say, { reading = (n) => `Reading your ${n.toLocaleString('en')}-token text`,
  writing = (k) => `Writing: ${k} pass${k === 1 ? '' : 'es'} done` } = {}) {
  let began = 0;
  let tokens = 0;
  let passes = 0;
  let timer = null;
  const show = () => say(`${passes ? writing(passes) : reading(tokens)}: ${Math.floor((performance.now() - began) / 1000)} s…`);
  return {
    event(m) {
      if (m.type === 'started') {
        [began, tokens] = [performance.now(), m.tokens];
        timer = setInterval(show, 1000);
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

export function runFrame(root, { panel, text, rows = 3, details = false }) {
  const rt = runtime();
  const input = el('textarea', { className: 'onepass-text', rows, value: text, ariaLabel: 'Your text' });
  const kv = el('input', { type: 'checkbox', className: 'onepass-kv', checked: true });
  const run = button('Run', 'onepass-run', true);
  const cancel = button('Cancel', 'onepass-cancel');
  cancel.disabled = true;
  const model = modelStatus(root);
  const view = new PassView();
  const kvLine = el('p', { className: 'onepass-kvline' });
  const extra = el('div', { className: 'onepass-extra' });
  const notice = el('p', { className: 'onepass-notice', role: 'status' }); // refusals, kept while the run goes on
  const detail = el('pre', { className: 'onepass-detail-text' });
  const detailBox = el('details', { className: 'onepass-detail', hidden: true }, [el('summary', { textContent: 'What the runtime said' }), detail]);
  const controls = el('div', { className: 'onepass-controls' }, [el('label', {}, [kv, ' KV cache']), run, cancel, model.retry]);
  root.append(input, controls, model.status, notice, ...(details ? [detailBox] : []), extra, view.node, kvLine);
  const byKv = new Map(); // the last run's totals with the cache on and off, for the same request otherwise

  let running = false;
  cancel.addEventListener('click', () => rt.cancel());

  /**
   * Run `request` (cache first, unless `fresh`), draw it; returns {result, fromCache, timing} or null when refused or
   * failed. `timing` (a live run's) is {wall, passes: [{model, kv, bridge, python, page, drawing}]}, in seconds:
   * `page` from the pass's message sent (or the previous row drawn, if later: passes that queue up are not counted
   * twice) to its row drawn, `drawing` the part of it the page spent drawing.
   */
  async function execute(request, { note = '', fresh = false } = {}) {
    if (running) {
      notice.textContent = 'A run is already in progress: wait for it to finish, or press Cancel.';
      return null;
    }
    if (!request.text.trim()) {
      notice.textContent = 'The text is empty: type a few words first.';
      return null;
    }
    notice.textContent = '';
    detailBox.hidden = true;
    delete root.dataset.error;
    running = true;
    root.dataset.state = 'running';
    cancel.disabled = false;
    const clock = runningClock(model.say);
    let timing = null;
    try {
      view.reset(request.text, note);
      const live = async () => {
        model.say('Running…');
        const info = await model.ready();
        const passes = [];
        let lastDrawn = -Infinity; // on the clock page and worker share, in ms
        const began = performance.now();
        const recording = await record(request, (m) => {
          const arrived = performance.now();
          clock.event(m);
          if (m.type !== 'pass') return;
          view.add(m.pass, m.text, m.labels);
          // The page's part: from the worker posting the pass to its row drawn here, on the clock both share.
          const drawn = performance.now();
          const page = (performance.timeOrigin + drawn - Math.max(m.sent, lastDrawn)) / 1000;
          lastDrawn = performance.timeOrigin + drawn;
          if (m.pass.timing) passes.push({ ...m.pass.timing, page, drawing: (drawn - arrived) / 1000 });
        });
        timing = { wall: (performance.now() - began) / 1000, passes };
        recordLastPass(recording.result.passes, info);
        return recording;
      };
      const { value: recording, fromCache } = fresh ? { value: await live(), fromCache: false } : await cachedOr(panel, request, live);
      if (fromCache) {
        for (const event of recording.events) view.add(event.pass, event.text, recording.result.labels);
      }
      model.say(fromCache ? 'From cache: this exact run was done before with this model, so it costs nothing now.' : 'Done.');
      view.finish(recording.result);
      showKv(request, recording.result);
      root.dataset.state = 'done';
      root.dataset.source = fromCache ? 'cache' : 'live';
      return { result: recording.result, fromCache, timing };
    } catch (err) {
      const cancelled = err.code === 'cancelled';
      model.say(cancelled ? 'Cancelled.' : `The run failed: ${err.message}`);
      detail.textContent = err.detail ?? '';
      detailBox.hidden = !err.detail;
      root.dataset.state = cancelled ? 'cancelled' : 'error';
      root.dataset.error = err.code ?? 'error';
      return null;
    } finally {
      clock.stop();
      running = false;
      cancel.disabled = true;
    }
  }

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

  /** While the model downloads, draw the default example's precomputed run (if the build made one). */
  async function showTrace(key) {
    const trace = (await traces())[key];
    // Once the model is here (a later page of the visit), the panel waits for a live run instead.
    if (!trace || root.dataset.source || rt.info) return null;
    input.value = trace.request.text;
    view.reset(trace.request.text, recordedNote(trace));
    for (const event of trace.events) view.add(event.pass, event.text, trace.result.labels);
    view.finish(trace.result);
    root.dataset.source = 'trace';
    return trace;
  }

  return { rt, input, kv, run, cancel, model, notice, view, extra, execute, showTrace, isRunning: () => running };
}

/** A live generation and its passes as they came, for the cache to replay; `onEvent` sees every event as it comes. */
async function record(request, onEvent = () => {}) {
  const events = [];
  const result = await runtime().generate(request, (m) => {
    if (m.type === 'pass') events.push({ pass: m.pass, text: m.text });
    onEvent(m);
  });
  return { result, events };
}

/** A run that is compared, not drawn (the greedy reference of step 5): from the cache, or live. */
export async function quietRun(panel, request) {
  return (await cachedOr(panel, request, () => record(request))).value.result;
}
