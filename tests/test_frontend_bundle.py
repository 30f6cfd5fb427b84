"""The committed bundles ``tb_graph_plugin/static/index.js`` (the app) and
``tb_graph_plugin/static/scene_worker.js`` (the scene worker) are exactly what ``frontend/`` builds.

Rebuilds the frontend into a temporary folder (``npm ci`` first when ``node_modules`` is missing)
and compares bytes, so a source change without ``npm run build`` fails here. Also type-checks the
sources with the project's TypeScript compiler (``tsc --noEmit``), as CI does; the wire-format
mirror ``frontend/src/api/types.ts`` is checked against ``tb_graph_plugin/wire.py`` in
``test_wire_mirror.py``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FRONTEND = REPO / "frontend"
BUNDLE = REPO / "tb_graph_plugin" / "static" / "index.js"
WORKER = REPO / "tb_graph_plugin" / "static" / "scene_worker.js"
TSC = FRONTEND / "node_modules" / ".bin" / "tsc"


def _npm() -> str:
    npm = shutil.which("npm")
    assert npm, "npm is required to build the frontend (Node.js >= 18)"
    return npm


def _npm_ci_once() -> None:
    """``npm ci`` when ``node_modules`` lacks the build's or the type check's tools."""
    if not (FRONTEND / "node_modules" / "esbuild").is_dir() or not TSC.is_file():
        subprocess.run([_npm(), "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True, timeout=600)


@pytest.fixture(scope="module")
def fresh_build(tmp_path_factory):
    """The folder ``node build.mjs`` wrote: index.js and scene_worker.js."""
    _npm_ci_once()
    out = tmp_path_factory.mktemp("bundle") / "index.js"
    subprocess.run(["node", "build.mjs", str(out)], cwd=FRONTEND, check=True, timeout=300)
    return out.parent


@pytest.fixture(scope="module")
def fresh_bundle(fresh_build) -> bytes:
    return (fresh_build / "index.js").read_bytes()


@pytest.mark.slow
def test_committed_bundle_is_not_stale(fresh_bundle):
    assert BUNDLE.is_file(), "tb_graph_plugin/static/index.js is missing: run `npm run build` in frontend/"
    assert BUNDLE.read_bytes() == fresh_bundle, (
        "tb_graph_plugin/static/index.js is stale: run `npm ci && npm run build` in frontend/ and commit it"
    )


@pytest.mark.slow
def test_committed_scene_worker_is_not_stale(fresh_build):
    assert WORKER.is_file(), "tb_graph_plugin/static/scene_worker.js is missing: run `npm run build` in frontend/"
    assert WORKER.read_bytes() == (fresh_build / "scene_worker.js").read_bytes(), (
        "tb_graph_plugin/static/scene_worker.js is stale: run `npm ci && npm run build` in frontend/ and commit it"
    )
    text = WORKER.read_text(encoding="utf-8")
    assert "import(" not in text and not re.search(r"^(import|export)\s", text, re.M), "a classic worker script"


@pytest.mark.slow
def test_bundle_is_one_es_module_exporting_render(fresh_bundle):
    text = fresh_bundle.decode("utf-8")
    assert re.search(r"export\s*\{[^}]*\bas render\b[^}]*\}|export\s*\{[^}]*\brender\b", text), "render() not exported"
    assert "import(" not in text and not re.search(r"^import\s", text, re.M), "the bundle must not load other modules"
    # the SVG namespace of exported views (app/export_view.ts) is a name, never fetched
    text = text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "http://" not in text and "https://" not in text.replace("https://www.w3.org", ""), "no external URLs (CSP)"


@pytest.mark.slow
def test_frontend_type_checks_with_tsc_no_emit():
    """``tsc --noEmit -p frontend`` (strict, see ``frontend/tsconfig.json``) reports no error, so a
    wire type changed in ``types.ts`` breaks here every use the frontend makes of it."""
    _npm_ci_once()
    done = subprocess.run([str(TSC), "--noEmit", "-p", str(FRONTEND)], cwd=FRONTEND, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"tsc --noEmit found errors:\n{done.stdout}{done.stderr}"
