/**
 * Mounts every `<div data-onepass-panel="generate">` on the page. Material's `document$` emits
 * on every page load, including instant navigation, so panels appear on whichever page holds them.
 * All text is set with textContent, so nothing typed or generated is read as HTML.
 */
import { runtime } from './client.js';

const MODES = { greedy: 'One token per pass (greedy)', lookup: 'Prompt lookup (copy and check)' };
const MAX_NEW = 24;

function el(tag, props = {}, children = []) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

function formatBytes(n) {
  return `${(n / 1e6).toFixed(1)} MB`;
}

function mountGenerate(root) {
  const text = el('textarea', { className: 'onepass-text', rows: 3, value: root.dataset.text ?? 'The capital of France is Paris. The capital of Italy is' });
  const mode = el('select', { className: 'onepass-mode' }, Object.entries(MODES).map(([value, label]) => el('option', { value, textContent: label })));
  const kv = el('input', { type: 'checkbox', className: 'onepass-kv', checked: true });
  const run = el('button', { className: 'onepass-run md-button md-button--primary', textContent: 'Run' });
  const cancel = el('button', { className: 'onepass-cancel md-button', textContent: 'Cancel', disabled: true });
  const progress = el('progress', { className: 'onepass-progress', max: 1, value: 0 });
  const status = el('p', { className: 'onepass-status', textContent: 'The model loads when the page opens.' });
  const output = el('pre', { className: 'onepass-output' });
  const prompt = el('span', { className: 'onepass-prompt' });
  const generated = el('span', { className: 'onepass-generated' });
  output.append(prompt, generated);
  const counters = el('p', { className: 'onepass-counters' });
  const passes = el('ol', { className: 'onepass-passes' });
  root.append(
    el('div', { className: 'onepass-controls' }, [
      text,
      el('label', {}, ['Mode ', mode]),
      el('label', {}, [kv, ' KV cache']),
      run, cancel,
    ]),
    progress, status, output, counters, passes,
  );

  const rt = runtime();
  const load = () => rt.load((loaded, total) => {
    progress.max = total;
    progress.value = loaded;
    status.textContent = `Loading the model: ${formatBytes(loaded)} of ${formatBytes(total)} (${Math.floor((100 * loaded) / total)} %)`;
  }).then((info) => {
    progress.value = progress.max;
    status.textContent = `Loaded ${info.model} (${formatBytes(info.bytes)}, ${info.quantisation}), ${info.threads} thread(s).`;
    root.dataset.state = 'ready';
    return info;
  }, (err) => {
    status.textContent = `The model could not be loaded: ${err.message}${err.retryable ? ' Press Run to try again.' : ''}`;
    root.dataset.state = 'error';
    throw err;
  });
  load().catch(() => {});

  run.addEventListener('click', async () => {
    run.disabled = true;
    cancel.disabled = false;
    passes.replaceChildren();
    prompt.textContent = text.value;
    generated.textContent = '';
    counters.textContent = '';
    root.dataset.state = 'running';
    let count = 0;
    let tokens = 0;
    try {
      await load();
      const result = await rt.generate({ text: text.value, mode: mode.value, kvCache: kv.checked, maxNew: MAX_NEW }, ({ pass, text: piece }) => {
        count += 1;
        tokens += pass.added.length;
        generated.textContent += piece;
        counters.textContent = `${count} passes, ${tokens} tokens`;
        passes.append(el('li', { textContent: `+${pass.added.length} token(s) in ${(pass.seconds * 1000).toFixed(1)} ms` }));
      });
      generated.textContent = result.text;
      const t = result.totals;
      counters.textContent = `${t.passes} passes, ${t.tokens} tokens, ${(t.tokens_per_pass).toFixed(2)} tokens per pass, ${(t.seconds * 1000).toFixed(0)} ms in passes`;
      root.dataset.state = 'done';
    } catch (err) {
      status.textContent = err.code === 'cancelled' ? 'Cancelled.' : `The run failed: ${err.message}`;
      root.dataset.state = err.code === 'cancelled' ? 'cancelled' : 'error';
    } finally {
      run.disabled = false;
      cancel.disabled = true;
    }
  });
  cancel.addEventListener('click', () => rt.cancel());
}

const PANELS = { generate: mountGenerate };

document$.subscribe(() => {
  window.onepass = runtime; // for the browser tests and the benchmark
  for (const root of document.querySelectorAll('[data-onepass-panel]:not([data-mounted])')) {
    root.dataset.mounted = '';
    PANELS[root.dataset.onepassPanel]?.(root);
  }
});
