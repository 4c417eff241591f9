/**
 * What every model panel shares: the site's manifest (read before the model loads), the model's loading
 * state with a retry, the precomputed traces, and the figures other pages read from localStorage.
 */
import { runtime } from '../client.js';
import { el, button, formatBytes, median } from './dom.js';
import { modelIdentity } from './identity.js';
import { KEYS, SITE_ROOT, write } from '../store.js';

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

/** After a completed step-5 run: what step 6's chart starts from. */
export function recordMeasured(run, greedyRun, label) {
  const t = run.totals;
  write(KEYS.measured, {
    alpha: t.drafted ? t.accepted / t.drafted : 0,
    // Drafting time per pass over pass time: what a draft costs, counted in passes.
    c: run.proposer_seconds / t.seconds,
    gamma: run.max_draft,
    tokens_per_pass: t.tokens_per_pass,
    passes: t.passes,
    tokens: t.tokens,
    greedy_passes: greedyRun ? greedyRun.totals.passes : null,
    label,
  });
}
