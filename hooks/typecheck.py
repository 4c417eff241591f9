"""The type check of the pages' and the runtime's JavaScript (``make lint``): ``python -m hooks.typecheck``.

tsc (``tsconfig.json``, ``--checkJs --noEmit``) reads the scripts' JSDoc against
the contract's generated types: ``contract.js`` and ``defaults.js`` are build
outputs (``hooks/contract.py``), and the scripts import them, and the vendored
libraries, by their paths in the built site. So this lays out that part of the
site in ``build/types/site/``, in a fraction of a second and without building
it: each script as a symbolic link to its source where the build copies it
(``docs/assets/onepass/`` to ``assets/onepass/``, ``runtime/`` to
``assets/onepass/runtime/``, ``hooks/runtime.py``), the two generated modules
beside them (written as the build writes them, for a site without a model),
and for each vendored library a declaration that types it loosely (``any``);
then it runs tsc and names the sources, not the links, in what tsc reports.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

from hooks import contract, runtime

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = Path("build", "types", "site")
TSC = ROOT / "node_modules" / ".bin" / "tsc"
ASSETS = Path("assets", "onepass")
# The vendored libraries the scripts import, by their path in the site (hooks/vendor.py, hooks/offline.py), and what
# each module is said to export: third-party code, typed as anything.
VENDORED = {
    "vendor/ort/ort.wasm.min.d.mts": "declare const ort: any;\nexport = ort;\n",
    "vendor/ort/ort-wasm-simd-threaded.d.mts": "declare const startModule: any;\nexport default startModule;\n",
    "vendor/tokenizers/tokenizers.min.d.mts": "export const Tokenizer: any;\n",
    "vendor/pyodide/pyodide.d.mts": "export const loadPyodide: any;\n",
    "vendor/workbox/workbox-window.prod.d.mts": "export const Workbox: any;\n",
}
# What the scripts use beyond the DOM's lib, which tsc reads them with (one program: the workers' lib cannot be
# combined with it).
GLOBALS = """\
// Material for MkDocs' page-change observable, which mount.js subscribes to.
declare const document$: { subscribe(next: () => void): unknown };
interface Window {
  // What mount.js leaves on the page for the browser tests and the benchmark.
  onepass: typeof import('./assets/onepass/runtime/client.js').runtime;
  onepassMount: () => void;
  // A worker's own: its postMessage hands buffers over.
  postMessage(message: unknown, transfer: Transferable[]): void;
}
interface FileSystemFileHandle {
  // A worker's own (loader.js's store checks for it).
  createSyncAccessHandle(): Promise<unknown>;
}
interface Navigator {
  // Chromium's Network Information API (the model's download button reads saveData).
  connection?: { saveData?: boolean };
}
"""


def sources() -> dict[Path, Path]:
    """Each script's path in the site, with its source."""
    pages = ROOT / "docs" / ASSETS
    found = {ASSETS / path.relative_to(pages): path for path in pages.rglob("*.js")}
    found.update({runtime.TARGET / path.name: path for path in runtime.SOURCE.glob("*.js")})
    return found


def lay_out(folder: Path = ROOT / LAYOUT) -> dict[Path, Path]:
    """``folder`` laid out as the site's scripts (made anew); returns each link's path with its source."""
    shutil.rmtree(folder, ignore_errors=True)
    links = {}
    for path, source in sources().items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).symlink_to(source)
        links[folder / path] = source
    for path, text in [(contract.CONTRACT, contract.contract_module()), (contract.MODULE, contract.defaults_module(None)),
                       *VENDORED.items(), ("globals.d.ts", GLOBALS)]:
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return links


def tsc(project: Path = ROOT / "tsconfig.json", links: dict[Path, Path] | None = None) -> subprocess.CompletedProcess:
    """tsc over ``project``, its report naming each linked script by its source (relative to the repository)."""
    done = subprocess.run([str(TSC), "--project", str(project), "--pretty", "false"], cwd=ROOT, capture_output=True,
                          text=True)
    named = {str(link.relative_to(ROOT) if link.is_relative_to(ROOT) else link): str(source.relative_to(ROOT))
             for link, source in (links or {}).items()}
    if named:
        pattern = re.compile("|".join(re.escape(link) for link in sorted(named, key=len, reverse=True)))
        done.stdout = pattern.sub(lambda match: named[match.group(0)], done.stdout)
    return done


def main() -> int:
    done = tsc(links=lay_out())
    sys.stdout.write(done.stdout + done.stderr)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
