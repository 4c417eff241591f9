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

The file is saved from a copy of ``model.onnx`` whose values are renamed (``save_ort``) so that the data of every
large weight starts at one offset mod 16, and the tab reads them aligned in place (hooks/model.py's ``graph_shift``;
benchmarks/FINDINGS.md, "Every weight aligned by its name"). The names do not change what is computed: ``model.onnx``,
and so the export's identity, keep optimum's, and the logits are bit-identical.
"""

import mmap
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import numpy_helper

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


def initializers(path: Path) -> dict[str, tuple[int, int, int]]:
    """An ORT-format file's initializers by name: ``(dims, size, start)``, the number of dims, the bytes of its data
    and where they start in the file (0 where it has none)."""
    from onnxruntime.tools.ort_format_model.ort_flatbuffers_py.fbs import InferenceSession

    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
        graph = InferenceSession.InferenceSession.GetRootAs(data, 0).Model().Graph()
        found = {}
        for i in range(graph.InitializersLength()):
            tensor = graph.Initializers(i)
            size = tensor.RawDataLength()
            # Where the raw bytes start: the generated RawDataAsNumpy's own field (12) and vector lookup.
            start = tensor._tab.Vector(tensor._tab.Offset(12)) if size else 0
            found[tensor.Name().decode()] = (tensor.DimsLength(), size, start)
    return found


def _pad(written: int, size: int, align: int) -> int:
    """flatbuffers' PreAlign: the bytes put before ``size`` more so that they end aligned, the buffer being built
    back to front with ``written`` bytes in it; nothing before nothing (a scalar's empty dims)."""
    return -(written + size) % align if size else 0


def _landing(end: int, name_length: int, dims: int, size: int) -> int:
    """Where the next initializer's data ends up, in bytes from the end of the ORT file mod 16, after one whose data
    starts ``end`` bytes from the end. onnxruntime writes an initializer as its name, its dims (int64), its data and
    then its table (20 bytes), and flatbuffers builds back to front: between two initializers' data lie the first's
    4-byte length and table, then the second's name (with its terminator and length), dims (aligned to 8, with
    their length) and data (aligned to 4). It predicts every step of the real model's file and the tiny one's
    (``tests/test_chunks.py``) but the first, which also holds the one vtable all the tensors share."""
    written = end + 4 + 20
    written += _pad(written, name_length + 1, 4) + name_length + 1 + 4
    written += _pad(written, 8 * dims, 8) + 8 * dims + 4
    written += _pad(written, size, 4) + size
    return written % 16


def _aligning(name_length: int, dims: int, size: int) -> int:
    """The characters to add to a name of ``name_length`` so that wherever its initializer lies (the initializers lie in
    the order of a hash of their names), every large weight's data starts 4 bytes from a 16-byte boundary, counted
    from the file's end.

    Data starts 4, 8 or 12 bytes mod 16 from the file's end, as the data is aligned to 4. The names keep it at 4 or 8:
    from either, each initializer's data lands on 4 or 8 again. A name whose bytes in the file are 4 past a multiple of
    8 lets the dims' alignment to 8 undo a difference of 4, so that an initializer with dims lands on one spot from
    both: 4, for data of a multiple of 8 bytes (every large weight). A scalar, which has no dims to align, gets a name
    that lands it where it started."""
    for extra in range(16):
        if {_landing(4, name_length + extra, dims, size), _landing(8, name_length + extra, dims, size)} <= {4, 8}:
            return extra
    raise AssertionError("every initializer has a name length that aligns it")


def _value_names(graph: onnx.GraphProto) -> dict[str, str]:
    """A short name of one length for every initializer (``w<index>``), ``Constant`` output (``c<index>``) and other
    node output (``v<index>``, for those onnxruntime folds into initializers) but the graph's inputs and outputs."""
    outer = {value.name for value in [*graph.input, *graph.output]}
    names = {tensor.name: f"w{i:07d}" for i, tensor in enumerate(graph.initializer)}
    for i, node in enumerate(graph.node):
        for j, output in enumerate(node.output):
            if output and output not in outer:
                names[output] = f"{'c' if node.op_type == 'Constant' else 'v'}{i:06d}{j}"
    if outer & {tensor.name for tensor in graph.initializer}:
        raise RuntimeError("a graph input or output is an initializer")
    return names


def _rename(model: onnx.ModelProto, names: dict[str, str]) -> None:
    graph = model.graph
    for tensor in graph.initializer:
        tensor.name = names[tensor.name]
    for value in graph.value_info:
        value.name = names.get(value.name, value.name)
    for node in graph.node:
        if any(attribute.g.node or attribute.graphs for attribute in node.attribute):
            raise RuntimeError(f"{node.op_type} has a subgraph, which the renaming does not reach")
        node.input[:] = [names.get(name, name) for name in node.input]
        node.output[:] = [names.get(name, name) for name in node.output]


def _convert(model: onnx.ModelProto, names: dict[str, str], folder: Path) -> Path:
    """``model`` with its values renamed by ``names``, saved in the ORT format in ``folder``."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    _rename(copy, names)
    # Fixed relative names: the paths' lengths, too, move what the child allocates.
    onnx.save(copy, str(folder / "in.onnx"))
    del copy
    command = [*_fixed_layout(), sys.executable, "-c", _SAVE, "in.onnx", "out.ort"]
    result = subprocess.run(command, capture_output=True, text=True, env={"PATH": os.defpath}, cwd=folder)
    if result.returncode != 0 or not (folder / "out.ort").is_file():
        why = result.stderr[-2000:]
        raise RuntimeError(f"onnxruntime could not save the graph in the ORT format:\n{why}")
    return folder / "out.ort"


def save_ort(onnx_file: Path, ort_file: Path) -> None:
    """Write ``onnx_file`` as an ORT-format file optimised at the extended level, the data of its large initializers
    starting at one offset mod 16: each value that becomes an initializer is named by ``_aligning``.

    What becomes an initializer, with what dims and size, is known for weights and constants; for values onnxruntime
    folds, and constants it shares under one of their names, a conversion says, so the file is converted again until
    every initializer in it was named by its shape (two or three times: seconds for the real model)."""
    model = onnx.load(str(onnx_file))
    bases = _value_names(model.graph)
    shapes = {bases[tensor.name]: (len(tensor.dims), _tensor_bytes(tensor)) for tensor in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute[0].name == "value":
            tensor = node.attribute[0].t
            shapes[bases[node.output[0]]] = (len(tensor.dims), _tensor_bytes(tensor))
    known = set(bases.values())
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(4):
            names = {value: base + "_" * _aligning(len(base), *shapes[base]) if base in shapes else base
                     for value, base in bases.items()}
            converted = _convert(model, names, Path(folder))
            found = {name.rstrip("_"): (dims, size) for name, (dims, size, _) in initializers(converted).items()}
            unnamed = {base: shape for base, shape in found.items() if base not in shapes and base in known}
            if not unnamed:
                break
            shapes.update(unnamed)
        else:
            # Written all the same: the manifest's graph_alignment gives the share of the weights that is aligned.
            print(f"saving the ORT-format file: {len(unnamed)} folded values still unnamed after 4 conversions, "
                  f"so not every weight starts at one offset mod 16", file=sys.stderr)
        shutil.move(converted, ort_file)


def _tensor_bytes(tensor: onnx.TensorProto) -> int:
    return len(tensor.raw_data) if tensor.raw_data else numpy_helper.to_array(tensor).nbytes
