"""The file every runtime loads: the int8 graph in onnxruntime's own format, optimised once, at export time.

onnxruntime-web takes 2.2 s (Node, 1 thread) to make a session from ``model.onnx``: it parses the protobuf
and optimises the graph again on every visit. Saved here in the ORT format (flatbuffers) after native
onnxruntime's *extended* optimisations, the same model loads in 1.4-1.5 s, and a page, Node and native
onnxruntime all run this one file (``MODEL_FILE``). An ORT-format file is not optimised again when it is
loaded, so the level is chosen here: *extended* is what onnxruntime-web's ``all`` applies to the ONNX file
(its further level is x86 layout work that WASM lacks). Measured: its logits are bit-identical to the ONNX
file's in onnxruntime-web over greedy runs with a KV cache and verify passes, and natively; a file saved with
optimisations disabled is not (it changes the examples' texts). The position-independence checks, native
and WASM, run on this file.

onnxruntime writes one table in the order of a hash map keyed by addresses, so the bytes depend on the
process's memory layout. The conversion runs in a child process with a fixed environment and, where
``setarch`` can turn it off, no address randomisation: the same ONNX file then gives the same bytes from
the same interpreter (``tests/test_exporter.py`` builds the tiny export twice and compares). Another
interpreter path (another checkout's virtualenv) moves what the child allocates and can change the bytes.
"""

import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

MODEL_FILE = "model.ort"

_SAVE = """
import sys
import onnxruntime as ort
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
options.optimized_model_filepath = sys.argv[2]
options.add_session_config_entry("session.save_model_format", "ORT")
ort.InferenceSession(sys.argv[1], options, providers=["CPUExecutionProvider"])
"""


def _fixed_layout() -> list[str]:
    """A prefix that runs a command without address randomisation, or nothing where that is not allowed."""
    setarch = shutil.which("setarch")
    if setarch is None:
        return []
    prefix = [setarch, platform.machine(), "-R"]
    allowed = subprocess.run([*prefix, "true"], capture_output=True).returncode == 0
    return prefix if allowed else []


def save_ort(onnx_file: Path, ort_file: Path) -> None:
    """Write ``onnx_file`` as an ORT-format file optimised at the extended level."""
    with tempfile.TemporaryDirectory() as folder:
        # Fixed relative names: the paths' lengths, too, move what the child allocates.
        (Path(folder) / "in.onnx").symlink_to(Path(onnx_file).resolve())
        command = [*_fixed_layout(), sys.executable, "-c", _SAVE, "in.onnx", "out.ort"]
        result = subprocess.run(command, capture_output=True, text=True, env={"PATH": os.defpath}, cwd=folder)
        if result.returncode != 0 or not (Path(folder) / "out.ort").is_file():
            why = result.stderr[-2000:]
            raise RuntimeError(f"onnxruntime could not save {onnx_file.name} in the ORT format:\n{why}")
        shutil.move(Path(folder) / "out.ort", ort_file)
