"""Packaging: every third-party module the plugin imports is declared in setup.py.

Regression: the fast layout path imported scipy, which only TensorFlow (a test dependency) had
brought in; a fresh ``pip install .`` then failed every ``/scene`` with ModuleNotFoundError.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Distribution name in install_requires -> the top-level module it provides.
IMPORT_NAME = {"protobuf": "google", "tensorboard": "tensorboard", "werkzeug": "werkzeug",
               "numpy": "numpy", "pygraphviz": "pygraphviz", "scipy": "scipy",
               "google-re2": "re2", "google-crc32c": "google_crc32c"}


def _declared() -> set[str]:
    setup = (REPO / "setup.py").read_text()
    block = re.search(r"install_requires=\[(.*?)\]", setup, re.S).group(1)
    names = {re.split(r"[<>=!~\[ ]", req, maxsplit=1)[0] for req in re.findall(r'"([^"]+)"', block)}
    return {IMPORT_NAME.get(name, name) for name in names}


OPTIONAL = REPO / "tb_graph_plugin" / "torch"  # the PyTorch front end: extra "torch", imported only by users
OPTIONAL_JAX = REPO / "tb_graph_plugin" / "jax"  # the JAX front end: extra "jax" (flax when the user has it)
FRONT_ENDS = (OPTIONAL, OPTIONAL_JAX)


def _imported(optional: bool = False, front_end=OPTIONAL) -> dict[str, str]:
    """Top-level modules the runtime imports (``optional``: those of the optional ``front_end``)."""
    found: dict[str, str] = {}
    for path in (REPO / "tb_graph_plugin").rglob("*.py"):
        in_front_end = any(f in path.parents for f in FRONT_ENDS)
        if (front_end not in path.parents) if optional else in_front_end:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top != "tb_graph_plugin":
                    found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_third_party_import_is_declared():
    missing = {m: where for m, where in _imported().items() if m not in _declared()}
    assert not missing, f"imported but not in install_requires: {missing}"


def test_the_pytorch_front_end_imports_only_torch_and_nothing_imports_it():
    setup = (REPO / "setup.py").read_text()
    extra = re.search(r'"torch":\s*\[(.*?)\]', setup, re.S)
    assert extra and "torch" in extra.group(1), "the 'torch' extra declares torch"
    assert set(_imported(optional=True)) - _declared() == {"torch"}
    for path in (REPO / "tb_graph_plugin").rglob("*.py"):
        if OPTIONAL in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):  # the server never needs torch
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not [n for n in names if n.startswith("tb_graph_plugin.torch")], path


def test_the_jax_front_end_imports_only_jax_and_flax_and_nothing_imports_it():
    setup = (REPO / "setup.py").read_text()
    extra = re.search(r'"jax":\s*\[(.*?)\]', setup, re.S)
    assert extra and "jax" in extra.group(1), "the 'jax' extra declares jax"
    assert set(_imported(optional=True, front_end=OPTIONAL_JAX)) - _declared() == {"jax", "flax"}
    for path in (REPO / "tb_graph_plugin").rglob("*.py"):
        if OPTIONAL_JAX in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):  # the server never needs jax
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not [n for n in names if n.split(".")[0] in ("jax", "flax") or n.startswith("tb_graph_plugin.jax")], path


def test_no_test_only_framework_is_a_runtime_import():
    imported = _imported()
    assert not {"tensorflow", "torch", "keras", "playwright", "transformers", "jax", "flax", "optax"} & set(imported), imported
