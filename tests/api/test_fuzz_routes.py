"""schemathesis drives every route and parameter of ``/openapi.json`` through a real TensorBoard
(issue 23, item 8: no request answers 500).

The app is ``TensorBoardWSGI`` with our plugin and the stock Graphs plugin (``TbApp``) over real
logs: four runs of the committed ``demo_logs`` (TF1 graph with steps and a profile, a TF2
multi-function trace, a PyTorch CNN, a Keras model). The description fuzzed is the one the plugin
serves, with one change that keeps its answers' schemas: ``run``/``tag``/``name``/the group-name
arrays draw either from the logs' real names or any string (``anyOf``); and half of the fuzzed
queries of the graph routes are made to name a real graph (``_a_real_graph_often``), so that
scenes, node details, hits and diffs are built and checked, not only 404s; the stock routes
likewise, and half of the uploads are a real graph or event file, whole or cut short
(``_real_files_often``).

Every operation (one test each) gets schemathesis' coverage phase (boundary and invalid values of
each parameter: wrong types, missing required ones, values outside enums, other methods) and
``MAX_EXAMPLES`` fuzzed cases (valid and invalid), with a fixed seed: bounded and repeatable. The
cases are driven with schemathesis' Python API (``BaseSchema.iter_coverage_cases``,
``APIOperation.as_strategy`` under Hypothesis' own ``@given``), not its pytest plugin, which reached
into pytest internals (``request.node._nodeid``) and broke on pytest 9.2 (issue 44); the plugin is
disabled for the suite (``-p no:schemathesis`` in ``pytest.ini``). A 202 (the job still runs) is followed as the
frontend does: ``/job`` until it ends, then the same request again, so the scenes, deltas, node
details, hits and diffs of the fuzzed parameters are checked too. Checks on every answer: no 5xx
(``not_a_server_error``), a documented status, content type and headers, a body conforming to its
schema. The last test prints the figures (cases, requests, answers by status, 5xx, seconds) and
asserts that 0 answers were 5xx.
"""

from __future__ import annotations

import collections
import copy
import json
import shutil
import time
import zlib
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tb_graph_plugin.api import openapi
from tests.tb_app import TbApp

pytestmark = pytest.mark.slow

DEMO_LOGS = Path(__file__).resolve().parents[2] / "demo_logs"
RUNS = ("tf1_graph", "tf2_multi_function_trace", "torch_cnn", "keras_callback", "torch_node_data")
MAX_EXAMPLES = 60  # fuzzed cases per operation, beside the examples and coverage phases
SEED = 23
JOB_POLLS = 6  # long polls of 10 s: the logs' graphs build in well under a second
ARTIFACT = Path(__file__).resolve().parents[1] / "_artifacts" / "fuzz_routes.json"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance,
          response_schema_conformance]

FIGURES: dict = {"cases": 0, "requests": 0, "by_status": collections.Counter(), "started": None, "ended": None,
                 "by_operation": collections.defaultdict(collections.Counter), "failures": []}


class Counting:
    """WSGI middleware counting each request's status."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        def counted(status, headers, exc_info=None):
            FIGURES["requests"] += 1
            FIGURES["by_status"][int(status.split()[0])] += 1
            return start_response(status, headers, exc_info)

        return self.app(environ, counted)


def _real_graphs(app: TbApp) -> list[dict]:
    """Every graph of the logs as query parameters (``run``, ``tag``, ``kind``, and with and
    without each listed ``step``), as ``/graphs`` lists them."""
    refs = []
    for r in app.json("/data/plugin/graph_explorer/graphs")["runs"]:
        for t in r["tags"]:
            kinds = [k for k, on in (("op", t["run_graph"] or t["op_graph"]), ("conceptual", t["conceptual_graph"]),
                                     ("profile", t["profile"])) if on]
            for kind in kinds:
                ref = {"run": r["run"], "tag": t["tag"], "kind": kind}
                refs += [ref] + [dict(ref, step=s["step"]) for s in t["steps"]]
    return refs


def _first_views(app: TbApp, graphs: list[dict]) -> dict:
    """(run, tag, kind) -> (its groups, all its nodes) in the graph's first view."""
    views = {}
    for ref in graphs:
        if "step" not in ref:
            nodes = app.json("/data/plugin/graph_explorer/scene", wait="30", **ref)["nodes"]
            views[(ref["run"], ref["tag"], ref["kind"])] = (
                sorted(n["name"] for n in nodes if n["kind"] in ("meta", "series")), sorted(n["name"] for n in nodes))
    return views


def _real_names(graphs: list[dict], views: dict) -> dict:
    """Runs, tags and the node names of the first views."""
    return {"run": sorted({g["run"] for g in graphs}), "tag": sorted({g["tag"] for g in graphs}),
            "name": sorted({name for _, nodes in views.values() for name in nodes})}


# The routes on one graph (``/diff``: two) named by ``run``/``tag``/``kind``/``step``.
GRAPH_ROUTES = ("/scene", "/scene_delta", "/node", "/search", "/diff", "/node_data")
# /node_data: real node data (the demo run torch_node_data's tags) on whichever real graph is drawn
NODE_DATA = {"data_run": "torch_node_data",
             "data_tag": ("activation_mean_abs", "activation_max_abs", "nonfinite_count", "module_ms")}
_REF = ("run", "tag", "kind", "step")


def _a_real_graph_often(graphs: list[dict], views: dict):
    """A ``flatmap_query`` hook: half of the fuzzed queries of the graph routes are made to name a
    real graph (``/diff``: and a real base graph), drawn by hypothesis, and, where they hold them,
    groups (``expanded``, ``from``) and a node (``name``) of its first view. Parameters drawn one
    by one from the description rarely name a graph that exists (a tag of another run, a kind the
    tag has not, a step not kept) or a group in it: those requests end in a 404 or 400 before
    any work."""

    def real(query: dict, path: str):
        graph = st.sampled_from(graphs)
        return st.tuples(graph, graph).flatmap(lambda pair: _on(query, path, *pair))

    def _on(query: dict, path: str, graph: dict, base: dict):
        groups, nodes = views[(graph["run"], graph["tag"], graph["kind"])]
        out = {k: v for k, v in query.items() if k not in _REF} | graph
        if path == "/diff":
            out = {k: v for k, v in out.items() if not k.startswith("base_")} | {f"base_{k}": v for k, v in base.items()}
        drawn = {}
        for key in ("expanded", "from"):
            if key in out and groups:
                drawn[key] = st.lists(st.sampled_from(groups), max_size=3).map(json.dumps)
        if "name" in out:
            drawn["name"] = st.sampled_from(nodes)
        if path == "/node_data":
            drawn["data_run"] = st.just(NODE_DATA["data_run"])
            drawn["data_tag"] = st.sampled_from(NODE_DATA["data_tag"])
            if "node" in out:
                drawn["node"] = st.sampled_from(nodes)
        return st.fixed_dictionaries(drawn).map(lambda values: out | values)

    # The stock routes name a graph their own way: no tag is the run graph, `conceptual=true`
    # the Keras model of the tag; /run_metadata takes a profile tag.
    stock = {"/graph": [], "/run_metadata": []}
    for g in graphs:
        if "step" in g:
            continue
        if g["kind"] == "op":
            stock["/graph"].append({"run": g["run"]} if g["tag"] == "__run_graph__" else {"run": g["run"], "tag": g["tag"]})
        elif g["kind"] == "conceptual":
            stock["/graph"].append({"run": g["run"], "tag": g["tag"], "conceptual": "true"})
        else:
            stock["/run_metadata"].append({"run": g["run"], "tag": g["tag"]})

    def hook(ctx, query):
        path = ctx.operation.path if ctx.operation is not None else None
        if not isinstance(query, dict):
            return st.just(query)
        if path in stock and stock[path]:
            kept = {k: v for k, v in query.items() if k not in ("run", "tag", "conceptual")}
            return st.one_of(st.just(query), st.sampled_from(stock[path]).map(lambda ref: kept | ref))
        if path in GRAPH_ROUTES:
            return st.one_of(st.just(query), real(query, path))
        return st.just(query)

    return hook


def _real_files_often(files: list[bytes]):
    """A ``flatmap_body`` hook for ``/upload``: half of the bodies are a real graph file or event
    file, whole or cut short, instead of random bytes (which are never a graph)."""
    real = st.sampled_from(files).flatmap(
        lambda blob: st.one_of(st.just(blob), st.integers(0, len(blob)).map(lambda n: blob[:n])))

    def hook(ctx, body):
        if ctx.operation is None or ctx.operation.path != "/upload":
            return st.just(body)
        return st.one_of(st.just(body), real)

    return hook


def _real_files(app: TbApp, logdir: Path) -> list[bytes]:
    """The event files of the logs, and the run graph of each run as pbtxt (stock ``/graph``)."""
    files = [p.read_bytes() for p in sorted(logdir.rglob("events.out.tfevents.*"))]
    for run in ("tf1_graph", "torch_cnn"):
        response = app.get("/data/plugin/graph_explorer/graph", run=run)
        assert response.status_code == 200
        files.append(response.get_data())
    return files


def _or_real(schema: dict, names: list[str]) -> dict:
    return {"anyOf": [{"type": "string", "enum": names}, schema]}


def fuzzed_description(names: dict) -> dict:
    """The served description, with ``run``/``tag``/``name`` (and ``base_`` ones) and the items of
    the group-name arrays drawn from real names or any string."""
    spec = copy.deepcopy(openapi.spec())
    for methods in spec["paths"].values():
        for operation in methods.values():
            for p in operation["parameters"]:
                key = p["name"].removeprefix("base_")
                if key in names and "schema" in p:
                    p["schema"] = _or_real(p["schema"], names[key])
                elif p["name"] in ("expanded", "from", "ungroup"):
                    array = p["content"]["application/json"]["schema"]
                    array["items"] = _or_real(array["items"], names["name"])
    return spec


@pytest.fixture(scope="module")
def tb(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("fuzz_logs")
    for run in RUNS:
        shutil.copytree(DEMO_LOGS / run, logdir / run)
    app = TbApp(logdir, workers=1)
    app.logdir = logdir
    yield app
    app.ours.pool.close()


@pytest.fixture(scope="module")
def api_schema(tb):
    graphs = _real_graphs(tb)
    views = _first_views(tb, graphs)
    schema = schemathesis.openapi.from_dict(fuzzed_description(_real_names(graphs, views)))
    schema.hook("flatmap_query")(_a_real_graph_often(graphs, views))
    schema.hook("flatmap_body")(_real_files_often(_real_files(tb, tb.logdir)))
    schema.app = Counting(tb.client.application)
    schema.config.generation.update(max_examples=MAX_EXAMPLES)
    schema.config.seed = SEED
    return schema


# The operations of the served description, one test each: "GET /scene", ...
OPERATIONS = [f"{method.upper()} {path}" for path, methods in openapi.spec()["paths"].items() for method in methods]


@pytest.mark.parametrize("label", OPERATIONS)
def test_every_route_answers_without_5xx_and_as_described(api_schema, label):
    """One operation: schemathesis' coverage cases, then ``MAX_EXAMPLES`` fuzzed cases drawn by
    Hypothesis from the operation's strategy (``APIOperation.as_strategy``, one per generation
    mode: valid and invalid data), each called and checked by ``_check``. Driven here with
    schemathesis' Python API and Hypothesis' own ``@given``, not schemathesis' pytest plugin
    (which reached into pytest internals and broke on pytest 9.2, issue 44)."""
    method, path = label.split(" ", 1)
    operation = api_schema[path][method]
    for case in _coverage_cases(api_schema, operation):
        _check(case)
    _fuzz(api_schema, operation)


def _coverage_cases(schema, operation) -> list:
    """schemathesis' coverage phase for one operation (the cases its pytest plugin and CLI run
    before fuzzing): boundary and invalid values of each parameter, missing required ones,
    values outside enums, other methods; deterministic."""
    generation = schema.config.generation_for(operation=operation, phase="coverage")
    return list(schema.iter_coverage_cases(operation, generation_modes=generation.modes, generation_config=generation))


def _fuzz(schema, operation) -> None:
    """``MAX_EXAMPLES`` cases from the operation's strategies (each generation mode the config
    enables), with a seed fixed per operation: bounded and repeatable."""
    generation = schema.config.generation_for(operation=operation, phase="fuzzing")
    strategy = st.one_of([operation.as_strategy(generation_mode=mode) for mode in generation.modes])

    @seed(zlib.crc32(f"{SEED} {operation.label}".encode()))
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck),
              phases=[Phase.explicit, Phase.generate, Phase.shrink])
    @given(case=strategy)
    def fuzzed(case):
        _check(case)

    fuzzed()


def _check(case) -> None:
    """Calls one case and validates the answer; a 202 is followed as the frontend does."""
    FIGURES["cases"] += 1
    FIGURES["started"] = FIGURES["started"] or time.perf_counter()
    try:
        response = _call_and_validate(case)
        if response.status_code == 202:  # as the frontend does: wait for the job, ask again
            job = response.json()["job_id"]
            for _ in range(JOB_POLLS):
                if _job(case, job)["state"] != "running":
                    break
            else:
                raise AssertionError(f"job {job} still runs after {JOB_POLLS} polls of 10 s")
            _call_and_validate(case)
    except Exception as e:
        FIGURES["failures"].append(f"{case.operation.label}: {type(e).__name__}: {str(e)[:400]}")
        raise
    finally:
        FIGURES["ended"] = time.perf_counter()


# identity: TensorBoard gzips for clients that accept it, and the WSGI test client, unlike an
# HTTP client, would hand the checks the compressed bytes
HEADERS = {"Accept-Encoding": "identity"}


def _call_and_validate(case):
    response = case.call(headers=HEADERS)
    FIGURES["by_operation"][case.operation.label][response.status_code] += 1
    case.validate_response(response, checks=CHECKS, headers=HEADERS)
    return response


def _job(case, job_id: str) -> dict:
    """The state of a job (a long poll of up to 10 s), as answered by ``/job`` and validated."""
    job_route = case.operation.schema["/job"]["GET"]
    job_case = job_route.Case(query={"id": job_id, "wait": 10})
    return _call_and_validate(job_case).json()


def test_fuzz_figures(capsys):
    """Runs after the fuzzing above (same module): prints its figures (also when pytest captures
    output) and keeps them in ``tests/_artifacts/fuzz_routes.json``; asserts no 5xx. The time is
    the wall clock from the first case to the last (generation included; the app's start and the
    first builds of the logs' graphs not)."""
    if not FIGURES["cases"]:
        pytest.skip("the fuzz test did not run")
    statuses = dict(sorted(FIGURES["by_status"].items()))
    server_errors = sum(n for status, n in statuses.items() if status >= 500)
    seconds = FIGURES["ended"] - FIGURES["started"]
    with capsys.disabled():
        print(f"\nfuzz (schemathesis): {FIGURES['cases']} cases, {FIGURES['requests']} requests in {seconds:.1f} s, "
              f"{server_errors} answered 5xx; by status {statuses}")
        for operation, counts in sorted(FIGURES["by_operation"].items()):
            print(f"  {operation}: {dict(sorted(counts.items()))}")
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    ARTIFACT.write_text(json.dumps({
        "cases": FIGURES["cases"], "requests": FIGURES["requests"], "seconds": round(seconds, 1),
        "server_errors": server_errors, "by_status": statuses,
        "by_operation": {op: dict(sorted(c.items())) for op, c in sorted(FIGURES["by_operation"].items())},
    }, indent=1))
    assert FIGURES["requests"] > 1000
    assert server_errors == 0, FIGURES["failures"][:5]
