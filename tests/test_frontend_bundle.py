"""The committed bundles ``tb_graph_plugin/static/index.js`` (the app) and
``tb_graph_plugin/static/scene_worker.js`` (the scene worker) are exactly what ``frontend/`` builds.

Rebuilds the frontend into a temporary folder (``npm ci`` first when ``node_modules`` is missing)
and compares bytes, so a source change without ``npm run build`` fails here. Also checks the
wire-format mirror ``frontend/src/api/types.ts`` against ``tb_graph_plugin/wire.py``.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tb_graph_plugin import wire

REPO = Path(__file__).resolve().parent.parent
FRONTEND = REPO / "frontend"
BUNDLE = REPO / "tb_graph_plugin" / "static" / "index.js"
WORKER = REPO / "tb_graph_plugin" / "static" / "scene_worker.js"
TYPES_TS = FRONTEND / "src" / "api" / "types.ts"


def _npm() -> str:
    npm = shutil.which("npm")
    assert npm, "npm is required to build the frontend (Node.js >= 18)"
    return npm


@pytest.fixture(scope="module")
def fresh_build(tmp_path_factory):
    """The folder ``node build.mjs`` wrote: index.js and scene_worker.js."""
    if not (FRONTEND / "node_modules" / "esbuild").is_dir():
        subprocess.run([_npm(), "ci", "--no-audit", "--no-fund"], cwd=FRONTEND, check=True, timeout=600)
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


def _ts_interface_fields(source: str, name: str) -> list[str]:
    m = re.search(r"export interface %s \{(.*?)\n\}" % name, source, re.S)
    assert m, f"interface {name} missing from types.ts"
    return re.findall(r"^\s+(\w+)\??:", m.group(1), re.M)


@pytest.mark.parametrize(
    "cls",
    [wire.GraphRef, wire.StepListing, wire.TagListing, wire.RunListing, wire.Listing, wire.SceneNode,
     wire.SceneEdge, wire.Scene, wire.SceneDelta, wire.Job, wire.NodeDetails, wire.SearchHit,
     wire.UploadAnswer, wire.ErrorAnswer, wire.DiffEntry, wire.GraphDiff],
    ids=lambda c: c.__name__,
)
def test_types_ts_mirrors_wire_field_for_field(cls):
    source = TYPES_TS.read_text(encoding="utf-8")
    assert _ts_interface_fields(source, cls.__name__) == [f.name for f in dataclasses.fields(cls)]


@pytest.mark.parametrize("enum_cls,ts_name", [(wire.GraphKind, "GraphKind"), (wire.NodeKind, "NodeKind"),
                                               (wire.EdgeKind, "EdgeKind"), (wire.JobState, "JobState"),
                                               (wire.DiffStatus, "DiffStatus")])
def test_types_ts_mirrors_wire_enums(enum_cls, ts_name):
    source = TYPES_TS.read_text(encoding="utf-8")
    m = re.search(r"export type %s = ([^;]+);" % ts_name, source)
    assert m, ts_name
    assert re.findall(r'"(\w+)"', m.group(1)) == [e.value for e in enum_cls]


def test_types_ts_has_the_same_wire_version():
    source = TYPES_TS.read_text(encoding="utf-8")
    assert re.search(r"export const WIRE_VERSION = (\d+);", source).group(1) == str(wire.WIRE_VERSION)
