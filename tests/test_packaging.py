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


def _imported() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in (REPO / "tb_graph_plugin").rglob("*.py"):
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


def test_no_test_only_framework_is_a_runtime_import():
    imported = _imported()
    assert not {"tensorflow", "torch", "keras", "playwright", "transformers"} & set(imported), imported
