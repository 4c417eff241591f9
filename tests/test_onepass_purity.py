"""The algorithms must import under Pyodide: only the standard library and the package itself.

numpy, onnxruntime, tokenizers and ``js`` may appear only in the native backend.
Importing a module must do nothing else (no side effects at import time).
"""

import ast
import importlib
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parent.parent / "py" / "onepass"
NATIVE_ONLY = {"backends/native.py", "backends/tokenizer.py"}
PURE = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
              if str(path.relative_to(PACKAGE)) not in NATIVE_ONLY)


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("relative", PURE)
def test_pure_modules_import_only_the_standard_library(relative):
    outside = imported_modules(PACKAGE / relative) - set(sys.stdlib_module_names) - {"onepass"}
    assert outside == set()


def test_the_pure_package_imports_without_numpy_or_onnxruntime(monkeypatch):
    for name in ("numpy", "onnxruntime", "tokenizers", "js"):
        monkeypatch.setitem(sys.modules, name, None)  # importing any of them now fails
    for name in list(sys.modules):
        if name == "onepass" or name.startswith("onepass."):
            monkeypatch.delitem(sys.modules, name)
    for relative in PURE:
        if relative != "__main__.py":
            dotted = relative.removesuffix(".py").replace("/", ".").removesuffix("__init__").rstrip(".")
            importlib.import_module(f"onepass.{dotted}" if dotted else "onepass")
