/**
 * The model card: which model runs, how big, how quantised (from the site's manifest, before anything
 * loads), the reader's choice to download it (asked once, remembered), the download's progress in bytes
 * and per cent, and, once loaded, whether this browser is ready to run it offline (and what is missing if
 * not). With `data-onepass-detail` (Under the hood) it also says how it runs: threads, isolation.
 */
import { runtime } from '../runtime/client.js';
import { button, el, formatBytes } from '../dom.js';
import { consented, downloadButton, downloadProgress, draftShare, keptForOffline, modelSizes, siteManifest, whenConsented } from './model.js';

/**
 * Whether the next visit can run the model with no connection, from what the service worker keeps (`kept`, from
 * offline.js: null without one) and whether the loader kept the model's chunks (`info.modelKept`): {ready, text}.
 */
export function offlineReadiness(kept, info) {
  const missing = [];
  if (!kept) {
    missing.push('the pages (this browser gives the site no service worker, so they are not kept)');
  } else if (kept.runtimes.kept < kept.runtimes.total) {
    missing.push(`Python and onnxruntime-web (${kept.runtimes.kept} of ${kept.runtimes.total} files kept; `
      + 'the next page that loads the model while the site is reachable keeps the rest)');
  }
  if (!info.modelKept) missing.push('the model (this browser gave it nowhere to be kept, so each visit downloads it)');
  if (!missing.length) {
    return { ready: true, text: `Ready offline: this browser keeps the pages, Python and onnxruntime-web `
      + `(${formatBytes(kept.runtimes.bytes)}) and the model, so every page and panel works without a connection.` };
  }
  return { ready: false, text: `Not ready to run offline: missing ${missing.join('; ')}.` };
}

export function mountModelCard(root) {
  const facts = el('p', { className: 'onepass-card-facts', textContent: 'Reading the model\'s manifest…' });
  const bar = el('progress', { className: 'onepass-progress', max: 1, value: 0 });
  const progress = el('p', { className: 'onepass-card-progress' });
  const where = el('p', { className: 'onepass-card-where' });
  const offline = el('p', { className: 'onepass-card-offline' });
  root.classList.add('onepass-card');
  root.append(facts, bar, progress, where, offline);
  let stop = () => {};

  const start = (manifest) => {
    const { download, kept } = modelSizes(manifest);
    facts.textContent = `${manifest.model.name} · ${formatBytes(download)} to download, ${formatBytes(kept)} kept${draftShare(manifest)} `
      + `· quantised: ${manifest.quantisation.name}`;
    const show = (loaded, total, elsewhere) => {
      bar.max = total;
      bar.value = loaded;
      progress.textContent = `Downloaded ${downloadProgress(loaded, total, elsewhere)}`;
    };
    const rt = runtime();
    stop = rt.watch(show);
    const load = () => rt.load().catch((err) => {
      progress.textContent = `The model could not be loaded: ${err.message}. The panels below offer a retry.`;
      root.dataset.state = 'error';
    });
    if (consented()) {
      load();
    } else {
      // Nothing of the model is fetched until the reader says so, here or in any panel; the choice is remembered.
      progress.textContent = `The model is not downloaded yet: ${formatBytes(download)} on the wire${draftShare(manifest)}, `
        + 'kept by the browser where it allows. ';
      progress.append(downloadButton(download));
      root.dataset.state = 'asking';
      whenConsented().then(() => {
        progress.textContent = 'Starting the download…';
        root.dataset.state = 'loading';
        load();
      });
    }
    rt.whenLoaded.then((info) => {
      show(download, download);
      progress.textContent += ' · ready';
      if ('onepassDetail' in root.dataset) {
        where.textContent = `Runs in this tab: onnxruntime-web WASM, ${info.threads} thread${info.threads > 1 ? 's' : ''}, `
          + (info.crossOriginIsolated ? 'cross-origin isolated.' : 'not cross-origin isolated (so one thread).');
      }
      root.dataset.state = 'ready';
      offline.textContent = 'Keeping Python and onnxruntime-web for offline use…';
      keptForOffline(rt).then((worker) => {
        const { ready, text } = offlineReadiness(worker, info);
        offline.textContent = text;
        root.dataset.offline = ready ? 'ready' : 'missing';
      }, (err) => {
        offline.textContent = `Not ready to run offline: ${err.message}.`;
        root.dataset.offline = 'missing';
      });
    });
  };

  const read = () => siteManifest().then((manifest) => {
    if (manifest) return start(manifest);
    facts.textContent = 'This site was built without a model, so nothing can run here.';
    root.dataset.state = 'error';
  }, (err) => {
    facts.textContent = `The model's description could not be read: ${err.message}.`;
    const retry = button('Try again', 'onepass-retry');
    retry.addEventListener('click', () => {
      retry.remove();
      facts.textContent = 'Reading the model\'s manifest…';
      read();
    });
    facts.append(' ', retry);
    root.dataset.state = 'error';
  });
  read();
  return () => stop();
}
