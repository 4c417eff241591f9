/**
 * What every model panel shares: the site's manifest (read before the model loads), the model's loading
 * state with a retry, the precomputed traces, and the figures other pages read from localStorage.
 */
import { runtime } from '../client.js';
import { el, button, formatBytes, median } from './dom.js';
import { modelIdentity } from './identity.js';
import { KEYS, SITE_ROOT, forget, write } from '../store.js';
import { fit, measured } from '../estimate.js';

let manifestPromise = null;
let tracesPromise = null;

/** The site's model manifest, or null when the site was built without a model. */
export function siteManifest() {
  manifestPromise ??= fetch(new URL('model/manifest.json', SITE_ROOT)).then((r) => (r.ok ? r.json() : null), () => null);
  return manifestPromise;
}

/** The precomputed traces of this model (hooks/traces.py), or {} when there are none or they are stale. */
export function traces() {
  tracesPromise ??= Promise.all([siteManifest(), fetch(new URL('model/traces.json', SITE_ROOT)).then((r) => (r.ok ? r.json() : null), () => null)])
    .then(([manifest, data]) => (manifest && data && data.identity === modelIdentity(manifest) ? data.traces : {}));
  return tracesPromise;
}

export async function identity() {
  const manifest = await siteManifest();
  return manifest ? modelIdentity(manifest) : 'no-model';
}

/**
 * A status line and a retry button for the model: `ready()` resolves once it is loaded (loading it if needed),
 * and shows the download's progress on the way. A failed load offers Retry.
 */
export function modelStatus(root) {
  const rt = runtime();
  const status = el('p', { className: 'onepass-status', textContent: 'The model loads when the page opens.' });
  const retry = button('Retry loading', 'onepass-retry');
  retry.hidden = true;
  const onProgress = (loaded, total) => {
    status.textContent = `Loading the model: ${formatBytes(loaded)} of ${formatBytes(total)} (${Math.floor((100 * loaded) / total)} %)`;
  };
  const ready = () => rt.load(onProgress).then((info) => {
    retry.hidden = true;
    if (root.dataset.state === 'loading' || !root.dataset.state) root.dataset.state = 'ready';
    return info;
  }, (err) => {
    status.textContent = `The model could not be loaded: ${err.message}`;
    retry.hidden = false;
    root.dataset.state = 'error';
    throw err;
  });
  retry.addEventListener('click', () => {
    status.textContent = 'Trying again…';
    ready().then((info) => { status.textContent = `Loaded ${info.model}: press Run.`; }, () => {});
  });
  root.dataset.state = 'loading';
  ready().then((info) => {
    if (root.dataset.state === 'ready') status.textContent = `Loaded ${info.model} (${formatBytes(info.bytes)}, ${info.quantisation}), ${info.threads} thread(s): press Run.`;
  }, () => {});
  return { status, retry, ready, say: (text) => { status.textContent = text; } };
}

/** After a model run: the median time of a pass that fed one token (KV cache on), for the home page. */
export function recordLastPass(passes, info) {
  const single = passes.filter((p) => p.fed.length === 1).map((p) => p.seconds * 1000);
  if (single.length && info) write(KEYS.lastPass, { ms: median(single), threads: info.threads, model: info.model });
}

/**
 * After a completed step-5 run: what step 6's chart starts from. Alpha and c are fitted (estimate.js) so the
 * formula reproduces this run's tokens per pass and time per token, after the pass that read the prompt.
 */
export function recordMeasured(run, greedyRun, label) {
  const m = greedyRun ? measured(run, greedyRun, run.proposer_seconds, run.max_draft) : null;
  if (!m) {
    forget(KEYS.measured); // nothing drafted, or too short: the chart must not keep showing an older run
    return;
  }
  const { alpha, c, gamma } = fit(m);
  write(KEYS.measured, {
    alpha, c, gamma, label,
    // The whole run, as the comparison line showed it.
    passes: run.totals.passes,
    tokens: run.totals.tokens,
    greedy_passes: greedyRun.totals.passes,
    // What the fit reproduces: the rounds after the prompt was read.
    fitted: { passes: m.passes, tokens: m.tokens, ms_per_token: (1000 * m.seconds) / m.tokens,
      greedy_ms_per_token: (1000 * m.greedySeconds) / m.greedyPasses },
  });
}
