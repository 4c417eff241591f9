/**
 * What every model panel shares: the site's manifest (read before the model loads), the reader's consent to
 * the download (asked once, remembered), the model's loading state with a retry, the precomputed traces, and
 * the figures other pages read from localStorage.
 */
import { median, readManifest, runtime } from '../runtime/client.js';
import { el, button, formatBytes } from '../dom.js';
import { KEYS, PROGRESS_EVENT, SITE_ROOT, forget, read, write } from '../store.js';
import { fit, measured } from '../estimate.js';
import { keepForOffline, useKeptRuntimes } from '../offline.js';

/** @import { LoadInfo, PassRow } from '../runtime/contract.js' */

let manifestPromise = null;
let tracesPromise = null;
let keeping = null;

/** The site's model manifest; null when the site was built without a model; rejects (LoadError) when it could not be read. */
export function siteManifest() {
  manifestPromise ??= readManifest(new URL('model/', SITE_ROOT)).catch((err) => {
    manifestPromise = null; // the next caller asks again
    if (err.code === 'not_found') return null;
    throw err;
  });
  return manifestPromise;
}

/** The precomputed traces of this model (hooks/traces.py), or {} when there are none or they are stale. */
export function traces() {
  tracesPromise ??= Promise.all([siteManifest().catch(() => null), fetch(new URL('model/traces.json', SITE_ROOT)).then((r) => (r.ok ? r.json() : null), () => null)])
    .then(([manifest, data]) => (manifest && data && data.identity === manifest.identity ? data.traces : {}));
  return tracesPromise;
}

/**
 * What the reader downloads, from the manifest: bytes on the wire (the chunks are compressed) and bytes the browser
 * keeps, the model's and its draft model's together (the loader fetches both), and the draft's own download (0 when
 * the site has no draft).
 */
export function modelSizes(manifest) {
  const files = [...manifest.files, ...(manifest.draft?.files ?? [])];
  const kept = files.reduce((sum, f) => sum + f.size, 0);
  return { download: manifest.download_size ?? kept, kept, draft: manifest.draft?.download_size ?? 0 };
}

/** What the download includes besides the model: step 6's draft model, with its share ('' when there is none). */
export function draftShare(manifest) {
  const { draft } = modelSizes(manifest);
  return draft ? ` (step 6's draft model: ${formatBytes(draft)} of the download)` : '';
}

export const consented = () => read(KEYS.consent) === true;

/**
 * Resolves once the reader has agreed to the download, here or in any other panel or page (it is remembered).
 * @returns {Promise<void>}
 */
export function whenConsented() {
  return new Promise((resolve) => {
    if (consented()) return resolve();
    const check = () => {
      if (!consented()) return;
      window.removeEventListener(PROGRESS_EVENT, check);
      resolve();
    };
    window.addEventListener(PROGRESS_EVENT, check);
  });
}

/**
 * A button that records the reader's agreement to download the model of `bytes`; where the reader's connection asks
 * sites to save data (navigator.connection.saveData), a sentence saying so comes first.
 */
export function downloadButton(bytes) {
  const agree = button(`Download the model (${formatBytes(bytes)})`, 'onepass-download', true);
  agree.addEventListener('click', () => write(KEYS.consent, true));
  if (!navigator.connection?.saveData) return agree;
  const note = el('span', {
    className: 'onepass-save-data',
    textContent: 'Your browser says this connection saves data: you may prefer to download the model on another one. ',
  });
  const question = document.createDocumentFragment();
  question.append(note, agree);
  return question;
}

export async function identity() {
  const manifest = await siteManifest();
  return manifest ? manifest.identity : 'no-model';
}

/**
 * Once the model has loaded in this visit, on whichever page: the service worker keeps the runtimes it ran on, so the
 * next visit runs offline even when this page was not yet the worker's (offline.js). Resolves to what is kept
 * (null without a service worker), or rejects with why it could not ask.
 */
export function keptForOffline(rt) {
  keeping ??= rt.whenLoaded.then(() => keepForOffline()).catch((err) => {
    keeping = null; // the next page asks again
    throw err;
  });
  return keeping;
}

/** "12.0 MB of 634.2 MB (1 %)", and why it waits while another tab downloads what this one needs (loader.js). */
export function downloadProgress(loaded, total, elsewhere = false) {
  return `${formatBytes(loaded)} of ${formatBytes(total)} (${Math.floor((100 * loaded) / total)} %)`
    + (elsewhere ? ' · another tab is downloading it, and this tab will use that copy' : '');
}

/**
 * A status line and a button for the model: `ready()` resolves once it is loaded (asking the reader first, the
 * first time, then loading it if needed), and shows the download's progress on the way. Until the reader agrees
 * the button offers the download, with its size; after a failed load it offers Retry. A panel that only may use
 * the model (step 6's sampling) passes `eager: false`: nothing happens until it calls `ready()`.
 */
export function modelStatus(root, { eager = true } = {}) {
  const rt = runtime();
  keptForOffline(rt).catch((err) => console.warn('onepass: the runtimes could not be kept for offline use:', err.message));
  // Until the manifest says more: with the reader's agreement the model loads now; without it, the panel asks.
  const status = el('p', { className: 'onepass-status', textContent: consented() ? 'Loading the model…' : 'Reading the model\'s description…' });
  const retry = button('Retry loading', 'onepass-retry');
  retry.hidden = true;
  const onProgress = (loaded, total, elsewhere) => {
    status.textContent = `Loading the model: ${downloadProgress(loaded, total, elsewhere)}`;
  };
  let agreed = null; // the wait for the reader's agreement, shared by every ready() until it comes
  const ask = () => siteManifest().then((manifest) => {
    if (!manifest) throw Object.assign(new Error('this site was built without a model, so nothing can run here'), { code: 'no_model' });
    const { download } = modelSizes(manifest);
    // Written anew on every ask: a panel's own messages may have replaced the question meanwhile.
    status.textContent = `This panel runs ${manifest.model.name} in your browser: a download of ${formatBytes(download)} on the wire`
      + `${draftShare(manifest)}, kept by the browser for your next visit where it allows. `;
    status.append(downloadButton(download));
    root.dataset.state = 'asking';
    agreed ??= whenConsented().then(() => {
      status.textContent = 'Loading the model…';
      root.dataset.state = 'loading';
    });
    return agreed;
  });
  const load = () => rt.load(onProgress).then((info) => {
    retry.hidden = true;
    if (root.dataset.state === 'loading' || !root.dataset.state) root.dataset.state = 'ready';
    return info;
  }, async (err) => {
    // The retry on the runtimes this browser keeps, if the network failed them (offline.js); it is offered once the
    // service worker has heard, or has none to offer.
    await useKeptRuntimes().catch(() => null);
    status.textContent = `The model could not be loaded: ${err.message}`;
    retry.hidden = false;
    root.dataset.state = 'error';
    throw err;
  });
  const ready = () => (consented() ? load() : ask().then(load, (err) => {
    status.textContent = `The model could not be loaded: ${err.message}`;
    root.dataset.state = 'error';
    retry.hidden = err.code === 'no_model';
    throw err;
  }));
  retry.addEventListener('click', () => {
    status.textContent = 'Trying again…';
    ready().then((info) => { status.textContent = `Loaded ${info.model}: press Run.`; }, () => {});
  });
  if (eager) {
    root.dataset.state = 'loading';
    ready().then((info) => {
      if (root.dataset.state === 'ready') status.textContent = `Loaded ${info.model} (${formatBytes(info.bytes)}, ${info.quantisation}): press Run.`;
    }, () => {});
  }
  return { status, retry, ready, say: (text) => { status.textContent = text; } };
}

/**
 * After a model run: the median time of a pass that fed one token (KV cache on), for the home page.
 * @param {PassRow[]} passes
 * @param {LoadInfo | null} info
 */
export function recordLastPass(passes, info) {
  const single = passes.filter((p) => p.fed.length === 1).map((p) => p.seconds * 1000);
  if (single.length && info) write(KEYS.lastPass, { ms: median(single), threads: info.threads, model: info.model });
}

/**
 * After a completed step-5 run: what step 6's chart starts from. Alpha and c are fitted (estimate.js) so the
 * formula reproduces this run's tokens per pass and time per token, after the pass that read the prompt.
 */
export function recordMeasured(run, greedyRun, label) {
  const m = greedyRun ? measured(run, greedyRun, run.proposerSeconds, run.maxDraft) : null;
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
