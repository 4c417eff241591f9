"""Small helpers for rewriting an ONNX graph in place, keeping its nodes in topological order."""

from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper

MS_DOMAIN = "com.microsoft"


class Rewriter:
    """Emits replacement nodes with unique names and shared constants."""

    def __init__(self, model: onnx.ModelProto, prefix: str):
        self.model = model
        self.graph = model.graph
        self.prefix = prefix
        self._count = 0
        self._constants: dict[tuple, str] = {}
        self.initializers = {init.name: init for init in self.graph.initializer}

    def name(self, hint: str) -> str:
        self._count += 1
        return f"/{self.prefix}/{hint}_{self._count}"

    def constant(self, value, dtype) -> str:
        """A small constant, stored once however often it is used."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            self._constants[key] = self.add_initializer(self.name("const"), array)
        return self._constants[key]

    def add_initializer(self, name: str, array: np.ndarray) -> str:
        init = numpy_helper.from_array(array, name)
        self.graph.initializer.append(init)
        self.initializers[name] = init
        return name

    def node(self, out: list, op: str, inputs: list, domain: str = "", n_outputs: int = 1, outputs=None, **attrs):
        """Append a node to ``out`` and return its output name (or names)."""
        name = self.name(op)
        outputs = outputs or [f"{name}_output_{i}" for i in range(n_outputs)]
        out.append(helper.make_node(op, inputs, outputs, name=name, domain=domain, **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def replace_nodes(self, replace: Callable[[onnx.NodeProto, list], bool]) -> None:
        """Call ``replace(node, out)`` for every node; it appends replacements and returns True, or False to keep."""
        new_nodes: list = []
        for node in self.graph.node:
            if not replace(node, new_nodes):
                new_nodes.append(node)
        del self.graph.node[:]
        self.graph.node.extend(new_nodes)

    def drop_unused_initializers(self) -> None:
        used = {name for node in self.graph.node for name in node.input}
        used.update(output.name for output in self.graph.output)
        keep = [init for init in self.graph.initializer if init.name in used]
        del self.graph.initializer[:]
        self.graph.initializer.extend(keep)
        self.initializers = {init.name: init for init in keep}

    def use_domain(self, domain: str, version: int = 1) -> None:
        if not any(opset.domain == domain for opset in self.model.opset_import):
            self.model.opset_import.append(helper.make_opsetid(domain, version))


def producers(graph: onnx.GraphProto) -> dict:
    return {output: node for node in graph.node for output in node.output}


def consumers(graph: onnx.GraphProto) -> dict:
    found: dict = {}
    for node in graph.node:
        for name in node.input:
            found.setdefault(name, []).append(node)
    return found
