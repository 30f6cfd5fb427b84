"""``tb-graph``: look at a graph without a TensorBoard server.

Subcommands (argparse subparsers; each registers itself in ``SUBCOMMANDS``):

* ``tb-graph summary PATH [--run R] [--tag T] [--step S]`` - read a logdir, an event file,
  a ``.pbtxt``, a ``.pb``, a ``.pt2``, an ``.onnx`` or a ``.mlir`` (``ingest.local.load_graph_def_from_path``, the
  plugin's own reading code), build SlimGraph + Hierarchy and print
  ``hierarchy.summary.summarize`` as JSON; ``--cost`` adds ``cost`` (``hierarchy.summary.cost_summary``).
* ``tb-graph layout PATH [--run R] [--tag T] [--expand GROUP ...] [--format json|svg|dot]`` -
  lay out the graph for that expansion state (``layout.scene.build_scene``) and print the
  scene as JSON (``wire.Scene``: absolute coordinates, y down), SVG or Graphviz DOT.
* ``tb-graph diff A B [--run R] [--tag T] [--step S] [--a-run R] [--b-step S] ... [--json]`` -
  the structural diff of graph B against graph A (``diff.diff_hierarchies``), each read like
  ``summary`` reads PATH (``--run/--tag/--step`` for both sides, ``--a-*``/``--b-*`` for one).
  Exit status as ``diff(1)``: 0 the graphs are the same, 1 they differ, 2 trouble. Prints one
  line per node not the same (``+ added``, ``- removed``, ``~ changed (fields)``) or, with
  ``--json``, the ``wire.GraphDiff`` (``{"added": [...], "removed": [...], "changed": [...], ...}``);
  with the cost changes of the changed groups (``diff.cost.cost_changes``: ``$ group: params a ->
  b (+d), ...`` lines, JSON ``cost_changes``) unless ``--no-cost``.

* ``tb-graph search PATH (QUERY [--op OP] [--names-only] | --pattern "A -> * -> B")`` - the
  ``/search`` answer (``api.search``: a regex search, or the matches of a pattern of ops,
  ``graph.pattern``) as JSON; exit 0 when something matched, 1 when nothing did, 2 on error.

* ``tb-graph node-data FILE.json RUNDIR [--tag T] [--step S]`` - Model Explorer's node-data JSON
  written into a run directory as a node-data summary (``tb_graph_plugin.summary.node_data``).

Run as a program (``main()`` without arguments), the CLI reads logs with TensorBoard's TensorFlow
stub and never imports TensorFlow (``_without_tensorflow``): importing it costs 4-8 s.

Another subcommand is added with a ``_add_<name>(subparsers)`` function appended to
``SUBCOMMANDS`` that calls ``set_defaults(func=...)``.
"""

from __future__ import annotations

import argparse
import json
import sys
import types
from typing import Callable, Optional, Sequence

__all__ = ["main", "build_parser", "load_graph_def", "SUBCOMMANDS"]


def _hierarchy_options(args):
    from tb_graph_plugin.hierarchy import HierarchyOptions

    return HierarchyOptions(
        series_min_size=args.series_min_size,
        block_series_min_size=args.block_series_min_size,
        infer_scopes={"auto": None, "on": True, "off": False}[args.infer_scopes],
    )


def _load(args):
    return load_graph_def(args.path, args.run, args.tag, args.step)


def load_graph_def(path: str, run: Optional[str] = None, tag: Optional[str] = None,
                   step: Optional[int] = None):
    """GraphDef for PATH via ``ingest.local`` (the plugin's own reading code)."""
    from tb_graph_plugin.ingest.local import load_graph_def_from_path

    return load_graph_def_from_path(path, run=run, tag=tag, step=step)


def _summary(args) -> int:
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.hierarchy.summary import cost_summary, summarize, tree

    graph_def = _load(args)
    h = build_hierarchy(build_slim_graph(graph_def), _hierarchy_options(args))
    out = summarize(h)
    if args.tree:
        out["tree"] = tree(h)
    if args.cost:
        out["cost"] = cost_summary(h)
    json.dump(out, sys.stdout, indent=None if args.compact else 1)
    sys.stdout.write("\n")
    return 0


def _add_summary(subparsers) -> None:
    p = subparsers.add_parser("summary", help="print a JSON summary of a graph's hierarchy")
    p.add_argument("path", help="logdir, event file, .pbtxt, .pb, .pt2, .onnx or .mlir")
    p.add_argument("--run", default=None)
    p.add_argument("--tag", default=None)
    p.add_argument("--step", type=int, default=None)
    p.add_argument("--infer-scopes", choices=("auto", "on", "off"), default="auto",
                   help="recover scopes from name tokens (Keras 3 conv2_block1_...)")
    p.add_argument("--series-min-size", type=int, default=5)
    p.add_argument("--block-series-min-size", type=int, default=4)
    p.add_argument("--compact", action="store_true", help="one-line JSON")
    p.add_argument("--tree", action="store_true",
                   help="add 'tree': every group nested (kind, label, cardinality, template, series, inferred)")
    p.add_argument("--cost", action="store_true",
                   help="add 'cost': params, FLOPs, output bytes, unknown ops of the graph, each top-level node and series")
    p.set_defaults(func=_summary)


def _layout(args) -> int:
    from tb_graph_plugin import wire
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.layout.export import scene_to_dot, scene_to_svg
    from tb_graph_plugin.layout.scene import build_scene

    graph_def = _load(args)
    h = build_hierarchy(build_slim_graph(graph_def), _hierarchy_options(args))
    for group in args.expand:
        if not h.has(group) or not h.is_group(group):
            from tensorboard import errors

            raise errors.InvalidArgumentError(f"cannot expand {group!r}: no such group")
    ref = wire.GraphRef(run=args.run or "", tag=args.tag or "", kind=wire.GraphKind.OP, step=args.step)
    scene = build_scene(h, ref, args.expand)
    if args.format == "svg":
        sys.stdout.write(scene_to_svg(scene))
    elif args.format == "dot":
        sys.stdout.write(scene_to_dot(scene))
    else:
        sys.stdout.write(wire.to_json(scene))
    sys.stdout.write("\n")
    return 0


def _add_layout(subparsers) -> None:
    p = subparsers.add_parser("layout", help="print the laid-out scene for an expansion state")
    p.add_argument("path", help="logdir, event file, .pbtxt, .pb, .pt2, .onnx or .mlir")
    p.add_argument("--run", default=None)
    p.add_argument("--tag", default=None)
    p.add_argument("--step", type=int, default=None)
    p.add_argument("--expand", action="append", default=[], metavar="GROUP",
                   help="a group to draw expanded (repeatable; its ancestors must be expanded too)")
    p.add_argument("--format", choices=("json", "svg", "dot"), default="json")
    p.add_argument("--infer-scopes", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--series-min-size", type=int, default=5)
    p.add_argument("--block-series-min-size", type=int, default=4)
    p.set_defaults(func=_layout)


def _diff(args) -> int:
    from tb_graph_plugin import wire
    from tb_graph_plugin.diff import diff_hierarchies
    from tb_graph_plugin.diff.cost import cost_changes
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy

    def side(letter: str):
        run = getattr(args, f"{letter}_run") or args.run
        tag = getattr(args, f"{letter}_tag") or args.tag
        step = getattr(args, f"{letter}_step")
        step = args.step if step is None else step
        graph_def = load_graph_def(getattr(args, letter), run, tag, step)
        ref = wire.GraphRef(run=run or "", tag=tag or "", kind=wire.GraphKind.OP, step=step)
        return build_hierarchy(build_slim_graph(graph_def), _hierarchy_options(args)), ref

    (ha, ref_a), (hb, ref_b) = side("a"), side("b")
    answer = diff_hierarchies(ha, hb, ref_a, ref_b)
    costs = cost_changes(ha, hb, answer) if args.cost else []
    if args.json:
        out = wire.to_plain(answer)
        if args.cost:
            out["cost_changes"] = costs
        json.dump(out, sys.stdout, indent=None if args.compact else 1)
        sys.stdout.write("\n")
    else:
        marks = {wire.DiffStatus.ADDED: "+", wire.DiffStatus.REMOVED: "-", wire.DiffStatus.CHANGED: "~"}
        for e in sorted(answer.entries, key=lambda e: e.name):
            extra = f" ({', '.join(e.fields)})" if e.fields else ""
            was = f" was {e.old_name}" if e.old_name else ""
            sys.stdout.write(f"{marks[e.status]} {e.kind.value} {e.name}{extra}{was}\n")
        for change in costs:
            sys.stdout.write(f"$ {change['name']}: " + ", ".join(
                f"{f} {change['a'][f]:,} -> {change['b'][f]:,} ({change['delta'][f]:+,})"
                for f in ("params", "flops", "output_bytes", "unknown_ops") if change["delta"][f]) + "\n")
        c = answer.counts
        sys.stdout.write("ops: " + ", ".join(f"{v} {k}" for k, v in c["ops"].items())
                         + "; groups: " + ", ".join(f"{v} {k}" for k, v in c["groups"].items()) + "\n")
    return 0 if answer.same else 1


def _add_diff(subparsers) -> None:
    p = subparsers.add_parser("diff", help="structural diff of two graphs; exit 0 same, 1 differ, 2 error")
    p.add_argument("a", help="graph A (the base): logdir, event file, .pbtxt, .pb, .pt2, .onnx or .mlir")
    p.add_argument("b", help="graph B: logdir, event file, .pbtxt, .pb, .pt2, .onnx or .mlir")
    p.add_argument("--run", default=None, help="run of both sides (unless --a-run / --b-run)")
    p.add_argument("--tag", default=None, help="tag of both sides (unless --a-tag / --b-tag)")
    p.add_argument("--step", type=int, default=None, help="step of both sides (unless --a-step / --b-step)")
    for letter in ("a", "b"):
        p.add_argument(f"--{letter}-run", default=None)
        p.add_argument(f"--{letter}-tag", default=None)
        p.add_argument(f"--{letter}-step", type=int, default=None)
    p.add_argument("--json", action="store_true", help="print the GraphDiff as JSON")
    p.add_argument("--cost", action=argparse.BooleanOptionalAction, default=True,
                   help="report the cost changes of the changed groups ('$ group: params a -> b (+d)', JSON "
                        "'cost_changes'; default on)")
    p.add_argument("--compact", action="store_true", help="one-line JSON")
    p.add_argument("--infer-scopes", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--series-min-size", type=int, default=5)
    p.add_argument("--block-series-min-size", type=int, default=4)
    p.set_defaults(func=_diff, any_error_exit=2)


def _node_data(args) -> int:
    from tb_graph_plugin.ingest.node_data import from_model_explorer
    from tb_graph_plugin.summary import node_data

    with open(args.file, "rb") as f:
        graphs = from_model_explorer(f.read(), args.file)
    for graph_id, values in graphs.items():
        tag = f"{args.tag}/{graph_id}" if graph_id and len(graphs) > 1 else args.tag
        node_data(args.logdir, tag, dict(zip(values.names, values.values)), args.step,
                  thresholds=values.thresholds, gradient=values.gradient)
        print(f"{args.logdir}: node data {tag!r} step {args.step}: {len(values.names)} values")
    return 0


def _add_node_data(subparsers) -> None:
    p = subparsers.add_parser("node-data", help="write Model Explorer's node-data JSON into a logdir as node data")
    p.add_argument("file", help="node-data JSON (model_explorer.node_data_builder's format)")
    p.add_argument("logdir", help="the run directory to write to (e.g. the graph's run)")
    p.add_argument("--tag", default="node_data", help="tag (several graphs in the file: tag/graph id)")
    p.add_argument("--step", type=int, default=0)
    p.set_defaults(func=_node_data)


def _search(args) -> int:
    from tensorboard import errors

    from tb_graph_plugin import wire
    from tb_graph_plugin.api import search
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy

    if bool(args.pattern) == bool(args.query or args.op):
        raise errors.InvalidArgumentError("search takes --pattern, or a QUERY regex (and/or --op), not both")
    h = build_hierarchy(build_slim_graph(_load(args)), _hierarchy_options(args))
    state = types.SimpleNamespace(hierarchy=h)  # what the route's worker task reads
    if args.pattern:
        answer = search.search_pattern(state, args.pattern)
    else:
        answer = search.search_graph(state, args.query or "", args.op, budget_s=float("inf"), names_only=args.names_only)
    json.dump(wire.to_plain(answer), sys.stdout, indent=None if args.compact else 1)
    sys.stdout.write("\n")
    return 0 if answer.total else 1


def _add_search(subparsers) -> None:
    p = subparsers.add_parser("search", help="search a graph (as /search): a regex, or a pattern of ops A -> * -> B; "
                                             "exit 0 found, 1 none, 2 error")
    p.add_argument("path", help="logdir, event file, .pbtxt, .pb, .pt2 or .onnx")
    p.add_argument("query", nargs="?", default=None, help="RE2 regex over names, labels and op types")
    p.add_argument("--pattern", default=None,
                   help="steps joined by '->': an RE2 over op type (op:, label:, name: prefixes), '*' a gap of 0..3 "
                        "ops, '*N' of 0..N; e.g. '(MatMul|BatchMatMulV2) -> * -> Softmax'")
    p.add_argument("--op", default=None, help="op type, contained, ignoring case")
    p.add_argument("--names-only", action="store_true", help="match QUERY against names alone")
    p.add_argument("--run", default=None)
    p.add_argument("--tag", default=None)
    p.add_argument("--step", type=int, default=None)
    p.add_argument("--compact", action="store_true", help="one-line JSON")
    p.add_argument("--infer-scopes", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--series-min-size", type=int, default=5)
    p.add_argument("--block-series-min-size", type=int, default=4)
    p.set_defaults(func=_search, any_error_exit=2)


SUBCOMMANDS: list[Callable] = [_add_summary, _add_layout, _add_diff, _add_node_data, _add_search]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tb-graph", description=__doc__.split("\n")[0])
    subparsers = parser.add_subparsers(dest="command", required=True)
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def _without_tensorflow() -> None:
    """Make this process read logs with TensorBoard's TensorFlow stub, unless TF is already loaded.

    ``tensorboard.compat.tf`` resolves to ``tensorboard.compat.tensorflow_stub`` when the module
    ``tensorboard.compat.notf`` can be imported (the switch of TensorBoard's own
    ``//tensorboard/compat:no_tensorflow`` build target); we register an empty one. Two costs of
    the stub are then avoided: its ``gfile`` imports ``botocore``/``boto3`` and ``fsspec`` when
    installed (0.3 s here) to offer ``s3://`` and fsspec URLs, which the CLI never reads
    (``ingest.local.open_logs`` takes existing local paths only), so they are blocked; and its
    record reader checks CRCs in pure Python (0.2 s per MB), so it gets ``ingest.crc32c``'s.

    Pre-condition: called before anything resolved ``tensorboard.compat.tf``. Changes this whole
    process: only for the program itself, never when ``main`` is called from other code.
    """
    if sys.modules.get("tensorflow") is not None:  # already paid for: TensorBoard's normal choice
        return
    for name in ("tensorboard.compat.notf", "botocore", "boto3", "fsspec"):
        if name not in sys.modules:
            sys.modules[name] = types.ModuleType(name) if name.endswith("notf") else None
    from tensorboard.compat.tensorflow_stub import pywrap_tensorflow

    from tb_graph_plugin.ingest.crc32c import masked_crc32c

    pywrap_tensorflow.masked_crc32c = masked_crc32c  # the stub's PyRecordReader_New calls it


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the CLI on ``argv``; without it (the program itself) on ``sys.argv``, TensorFlow-free."""
    if argv is None:
        _without_tensorflow()
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Exception as e:  # a clear one-line error for users, not a traceback
        from tensorboard import errors

        from tb_graph_plugin.hierarchy.scopes import ScopesTooDeep

        if isinstance(e, (errors.PublicError, ScopesTooDeep)):  # ScopesTooDeep: the server's 413
            print(f"tb-graph: error: {e}", file=sys.stderr)
            return 2
        if getattr(args, "any_error_exit", None) is not None:  # diff: 1 means "differ", never a crash
            print(f"tb-graph: error: {type(e).__name__}: {e}", file=sys.stderr)
            return args.any_error_exit
        raise


if __name__ == "__main__":
    sys.exit(main())
