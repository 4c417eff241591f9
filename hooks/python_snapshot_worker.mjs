/**
 * Run by hooks/python_snapshot.py in headless Chromium at build time: Pyodide started in a module worker, as
 * the site's worker starts it, with the onepass wheel unpacked and the given modules imported, saved as a memory
 * snapshot, gzipped and posted back ({gzipped, jspi} or {error}). Pyodide's `_makeSnapshot`, `makeMemorySnapshot` and
 * `_loadSnapshot` are marked @ignore in its types: package.json pins the version they were checked on.
 */
import { loadPyodide } from './pyodide/pyodide.mjs';

self.onmessage = async ({ data: { wheel, modules } }) => {
  try {
    const base = new URL('./pyodide/', import.meta.url).href;
    const pyodide = await loadPyodide({ indexURL: base, packageBaseUrl: base, _makeSnapshot: true });
    const response = await fetch(new URL(wheel, import.meta.url));
    pyodide.unpackArchive(await response.arrayBuffer(), 'wheel');
    for (const name of modules) pyodide.pyimport(name);
    const raw = new Blob([pyodide.makeMemorySnapshot()]).stream().pipeThrough(new CompressionStream('gzip'));
    const gzipped = await new Response(raw).arrayBuffer();
    // The snapshot holds what Pyodide found here, such as WebAssembly stack switching: the worker loads it only where
    // the browser has the same.
    self.postMessage({ gzipped, jspi: 'Suspending' in WebAssembly }, [gzipped]);
  } catch (err) {
    self.postMessage({ error: String(err?.stack ?? err) });
  }
};
