"""What a worker process runs: build a graph once (GraphDef -> SlimGraph -> Hierarchy), then
answer scene, node and search tasks over it.

The per-graph pipeline :data:`BUILD`, in order, each step reported as a progress stage
(``workers.BUILD_STAGES``):

1. ``parse``       serialized GraphDef -> its nodes' encodings and columns
                   (``ingest.graph_encoding``; a diff's pair: parsed whole)
2. ``slim_graph``  ``graph.build_slim_graph``
3. ``hierarchy``   ``hierarchy.build_hierarchy`` (+ ``join_step_stats`` for profiles); for a
                   graph's first job, unless it is a profile or a diff, not here but after step 4
4. ``layout``      per task: ``layout.scene.build_scene`` for the expansion state asked for
   (``search`` and ``node`` report their task name as their stage)

The first view before the rest (issue 21): a first job asking for the first view (``first_view``)
is answered from ``first_view.first_view_hierarchy`` (stage ``first_view_hierarchy``: only the
groups that view shows are grouped, ~a quarter of the whole build on a training step) when it
can be; the whole Hierarchy is then built once the answer has gone out (``GraphState.settle``),
before the worker takes its next job on that lane. Any other job builds it first if it is not
built yet (stage ``hierarchy``).

Opening the first view's likeliest next group before the rest (issue 21): where that group is
the first of a multi-tower graph's towers (``first_view.expand_ahead_group``), the worker
builds it first, with its whole subtree (``GraphState.build_ahead``, stage ``expand_ahead``:
~0.35 s at 1M ops against ~1.2 s for the whole build), and answers a scene or scene delta that
opens only groups it covers from it, before the whole build (waiting :data:`AHEAD_LINGER_S` for
one) and between its steps (``GraphState.answers_early``, ``worker_process``). A quick job
meanwhile waits for what the main lane builds rather than building the whole Hierarchy beside
it: an info-pane click on a group the tower built ahead shows is answered from it
(``GraphState.hierarchy_for_node``).

A ``diff`` job's graph is a pair: its payload holds graph B and, under ``base``, the payload of
graph A; ``GraphState`` builds both (A as ``state.base``) and ``diff_task`` compares them
(``diff.diff_hierarchies``).

Every answer is a JSON string of a ``wire`` dataclass. A ``tensorboard.errors.PublicError``
becomes a failure with its HTTP code and message; any other exception a 500 naming it. The
process around these (lanes, heartbeat, graphs kept) is ``worker_process``.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import logging
import threading
import time
from typing import Callable, Optional

from tensorboard import errors

from tb_graph_plugin import wire
from tb_graph_plugin.api import limits, search
from tb_graph_plugin.ingest import graph_encoding, parse, run_metadata
from tb_graph_plugin.pipeline import Pipeline, Step, Timings

__all__ = ["GraphState", "BUILD", "TASKS", "LATE_IMPORTS", "preload", "preload_late"]

Progress = Callable[[str, float], None]
logger = logging.getLogger(__name__)


class GraphState:
    """One built graph held by a worker: its SlimGraph and Hierarchy, plus their layout cache.

    Built by :data:`BUILD`, each step reported as a progress stage (``faults.check`` runs on each)."""

    def __init__(self, payload: dict, progress: Progress, keep_protos: bool = False):
        # No collection while the graph is built and until it is frozen (below): with the
        # collector on, a full collection walked the new graph's millions of objects just before
        # ``gc.freeze`` (~85 ms at 1M ops, on the way to the first answer).
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._build(payload, progress, keep_protos)
        finally:
            if was_enabled:
                gc.enable()

    def _build(self, payload: dict, progress: Progress, keep_protos: bool) -> None:
        # Where the cold path's time went, for ``scene.stats["timings"]`` (and the debug log):
        # TensorBoard's read of the blob, the hand-off to this process, the imports the worker
        # had not finished (``preload``), then each BUILD step.
        self.timings = Timings()
        if "read_s" in payload:
            self.timings.add("read", payload["read_s"])
        if "sent_at" in payload:
            self.timings.add("hand_off", max(0.0, time.time() - payload["sent_at"]))
        start = time.perf_counter()
        preload()
        self.timings.add("imports", time.perf_counter() - start)
        from tb_graph_plugin.layout.scene import LayoutCache

        self.payload = payload
        self.what = payload.get("what", "graph")
        self.graph_def = None
        self.unmatched_stats = 0
        self.report: Optional[dict] = None  # ``graph_report``'s, once asked (the graph's: fixed once built)
        # The GraphDef is split into its nodes' encodings, never parsed whole (the parse is ~5x
        # its encoding, ~660 bytes an op): the info pane parses one NodeDef at a time
        # (ingest.graph_encoding, graph.node_defs). A diff pair parses it whole: the diff
        # compares every op's attrs.
        self.keep_protos = keep_protos or bool(payload.get("base"))
        self.hierarchy_options = _hierarchy_options(payload)
        self.run_metadata = payload.get("run_metadata")
        self.hierarchy = None  # the whole Hierarchy, once built (``build_hierarchy``)
        # After a first view drawn from a partial build: (that partial Hierarchy, the group to
        # build ahead in it), then (the Hierarchy built ahead, its layout cache) until the whole
        # one is built: one attribute, read at once by the other lane
        self.ahead_plan: Optional[tuple] = None
        self.ahead: Optional[tuple] = None
        self.settling = Settling()  # after a first view from a partial build: what settles when
        self._hierarchy_lock = threading.Lock()  # the quick lane may ask for it while the main lane builds it
        BUILD.run(self, timings=self.timings, progress=progress, span=(0.1, 0.55))
        self.first_scene = True
        self.payload = self.graph_def = None
        self.layout_cache = LayoutCache()  # group layouts, boundary edges, layout memo: reused across scenes
        # A diff job's pair: the base graph (A), built first the same way.
        self.base = GraphState(payload["base"], progress, keep_protos=True) if payload.get("base") else None
        # The graph lives as long as the worker keeps it: move its millions of objects out of
        # the collector's generations, so no later collection walks them (the first one, right
        # after the build re-enabled GC, cost ~0.2 s at 53k ops).
        gc.freeze()


    def build_hierarchy(self, progress: Optional[Progress] = None, between: Optional[Callable[[], None]] = None) -> None:
        """Build the whole Hierarchy (stage ``hierarchy``) unless it is built already;
        ``between()`` is called between its steps (it must not ask for it)."""
        if self.hierarchy is not None:
            return
        with self._hierarchy_lock:
            if self.hierarchy is None:
                if progress is not None:
                    progress("hierarchy", 0.5)
                start = time.perf_counter()
                _hierarchy(self, between)  # without the collector: ``build_hierarchy`` turns it off
                self.ahead = None  # dropped before the heap is frozen
                self._built("hierarchy", start)

    def first_view_hierarchy(self, progress: Progress):
        """A partial Hierarchy to draw the first view from (``first_view.first_view_hierarchy``),
        or None when that view needs the whole one, which is then ``self.hierarchy`` (built on
        from the partial build's scopes when it stopped right after them)."""
        from tb_graph_plugin.layout.scene.first_view import first_view_hierarchy

        progress("first_view_hierarchy", 0.6)
        with self._hierarchy_lock:  # a quick job on this graph waits for what this builds
            if self.hierarchy is not None:
                return None
            start = time.perf_counter()
            with _too_deep(self.what):
                h = first_view_hierarchy(self.slim, self.hierarchy_options)
            if h.grouped_only is None:
                self.hierarchy = h
                self._built("hierarchy", start)
                return None
            self.timings.add("first_view_hierarchy", time.perf_counter() - start)
            return h

    def _built(self, stage: str, start: float) -> None:
        """The whole Hierarchy is built: timed, and out of the collector's generations."""
        self.timings.add(stage, time.perf_counter() - start)
        gc.freeze()

    def settle(self, serve: Optional[Callable[..., None]] = None) -> None:
        """The build's work that can wait until the first answer has gone out (the worker calls
        it then): the whole Hierarchy when the first view was drawn without it (first, when
        planned, the first view's likeliest next group: :meth:`build_ahead`), the fast layout
        engine's imports when the job came before the worker had made them (:func:`preload_late`),
        then the memory the build's intermediates held given back to the system. ``serve(linger=0)``
        answers the jobs waiting that :meth:`answers_early` can: after the group built ahead, and
        lingering :data:`AHEAD_LINGER_S` for one (unless a job needs the whole build), then between
        the steps of the whole build."""
        settling = self.settling
        settling.thread = threading.current_thread()
        try:
            built = self.build_ahead()
            settling.ahead_done.set()
            if built and serve is not None:
                serve(AHEAD_LINGER_S)
            self.build_hierarchy(between=serve)
        except errors.PublicError:  # the graph's own fault (too deep): the next job says so
            pass
        finally:
            self.ahead = None
            settling.ahead_done.set()
            settling.active = False
            settling.done.set()
        preload_late()
        _return_freed_memory()

    def build_ahead(self) -> bool:
        """The Hierarchy of the first view with its likeliest next group opened
        (``hierarchy.build_expand_ahead_hierarchy``: a multi-tower graph's first tower), when a
        first view drawn from a partial build planned it (``ahead_plan``) and the whole
        Hierarchy is not built yet (stage ``expand_ahead`` in the timings). Whether it was built."""
        plan, self.ahead_plan = self.ahead_plan, None
        if plan is None or self.hierarchy is not None:
            return False
        from tb_graph_plugin.hierarchy import build_expand_ahead_hierarchy
        from tb_graph_plugin.layout.scene import LayoutCache

        start = time.perf_counter()
        h = build_expand_ahead_hierarchy(*plan)
        plan = None  # a partial Hierarchy the build spoilt is dropped here
        self.ahead = None if h is None else (h, LayoutCache())
        self.timings.add("expand_ahead", time.perf_counter() - start)
        return self.ahead is not None

    def answers_early(self, task: str, args: dict) -> bool:
        """Whether a job can be answered before the whole Hierarchy is built: a scene or a scene
        delta (not a first view) whose open groups the group built ahead covers."""
        ahead = self.ahead
        if self.hierarchy is not None or ahead is None or task not in ("scene", "scene_delta"):
            return False
        if args.get("first_view") and not args.get("expanded"):
            return False
        return _covers(ahead[0], [*args.get("expanded", ()), *args.get("from", ())])

    def hierarchy_for_node(self, name: str, progress: Progress):
        """The Hierarchy to read node ``name``'s details from (a quick job). While the main lane
        settles: the one built ahead, waited for while it is built, when ``name`` is a group
        shown there (its parent group is: ``_covers``); else the whole one, waited for while the
        main lane builds it (two builds at once on two threads would share one interpreter, and
        slow the group built ahead too). Otherwise the whole one, built first if it is not yet."""
        if self.hierarchy is None and self.settling.waits_here():
            self.settling.ahead_done.wait()
            ahead = self.ahead
            if self.hierarchy is None and ahead is not None and _covers_group(ahead[0], name):
                return ahead[0]
        return self.whole_hierarchy(progress)

    def whole_hierarchy(self, progress: Progress):
        """The whole Hierarchy for a job that needs it: waited for while the main lane settles
        the build (rather than built beside it), else built first if it is not yet."""
        if self.hierarchy is None and self.settling.waits_here():
            self.settling.whole_wanted.set()
            self.settling.done.wait()
        self.build_hierarchy(progress)
        return self.hierarchy

    def hierarchy_for(self, open_groups: list[str], progress: Progress):
        """The Hierarchy and layout cache to draw ``open_groups`` opened: the one built ahead while
        the whole one is not built and it covers them, else the whole one (built first if it is
        not yet)."""
        ahead = self.ahead
        if self.hierarchy is None and ahead is not None and _covers(ahead[0], open_groups):
            return ahead
        return self.whole_hierarchy(progress), self.layout_cache


AHEAD_LINGER_S = 1.0  # after the group built ahead, how long the main lane waits for its opening
# (the likeliest next click) before it starts the whole build, whose steps (up to ~0.2 s at 1M ops)
# such a job would otherwise wait between; a job that needs the whole build ends the wait


class Settling:
    """A GraphState's build settling after its first answer (``GraphState.settle``): a quick job
    then waits for what the main lane builds rather than building beside it."""

    def __init__(self) -> None:
        self.active = False  # a first view went out from a partial build, ``settle`` has not ended
        self.thread: Optional[threading.Thread] = None  # the one settling (never waits for itself)
        self.ahead_done = threading.Event()  # ``build_ahead`` ended (or was not planned)
        self.done = threading.Event()  # ``settle`` ended
        self.whole_wanted = threading.Event()  # a job waits for the whole Hierarchy: no lingering

    def waits_here(self) -> bool:
        """Whether a job on this thread waits for the settling (rather than building itself)."""
        return self.active and threading.current_thread() is not self.thread


def _covers_group(h, name: str) -> bool:
    """Whether ``name`` is a group whose parent a partial Hierarchy groups as the whole one does
    (its details read that parent's MetaEdges and its ancestors')."""
    gid = h.group_index.get(name)
    if gid is None or not h.is_group(gid):
        return False
    parent = h.group(gid).parent
    return parent >= 0 and _covers(h, [h.name_of(parent)])


def _covers(h, open_groups) -> bool:
    """Whether a partial Hierarchy groups each of ``open_groups`` as the whole one does (shown, or
    under a whole subtree)."""
    for name in open_groups:
        gid = h.group_index.get(name)
        if gid is None or not (name in h.grouped_only or h.under_whole_subtree(gid)):
            return False
    return True


def _return_freed_memory() -> None:
    """Give the heap's free blocks back to the system (glibc's ``malloc_trim``; a no-op elsewhere).
    The parsed protos dropped after a build are freed inside glibc's heap, which keeps them for
    later allocations: the worker's RSS stayed at its peak (+93 MB at 141k ops) without this."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def preload() -> None:
    """Import what building a graph and laying out its first view need, and start the dot
    worker (pygraphviz start-up on the other core). A worker process calls it on a thread as
    soon as it starts, so that the first job does not wait for these imports (~0.25 s); later
    calls return at once."""
    for module in ("tb_graph_plugin.graph", "tb_graph_plugin.hierarchy", "tb_graph_plugin.layout.scene"):
        importlib.import_module(module)
    from tb_graph_plugin.layout import dot

    dot.prestart()


LATE_IMPORTS = ("scipy.sparse.csgraph", "scipy.optimize")
"""What the fast layout engine (``layout.fast``: a big group's layout, and the second try
``engines.AutoEngine`` makes when dot's layout of a small one has crossings) imports on first
use: ~0.5 s, twice the imports of :func:`preload`. A first view laid out by dot alone needs
none of it (a training step's usually: 0 crossings), so a job reaching a worker still importing
waits for :func:`preload` only; one whose layout needs them imports them then. An idle worker
imports them once :func:`preload` is done (``worker_process``); when a job came first, its
build runs alone and ``GraphState.settle`` imports them after its answer."""


def preload_late() -> None:
    """Import :data:`LATE_IMPORTS` (at once when imported already)."""
    for module in LATE_IMPORTS:
        importlib.import_module(module)


def _parse(state: GraphState) -> None:
    """The GraphDef split into its nodes (``ingest.graph_encoding``), or parsed whole for a diff."""
    if state.keep_protos:
        state.graph_def = parse.parse_graph_def(state.payload["graph"], state.what)
    else:
        state.graph_def = graph_encoding.split_graph_def(state.payload["graph"], state.what)
    if state.payload.get("max_ops"):
        limits.check_ops(state.graph_def, state.what, state.payload["max_ops"])


def _slim_graph(state: GraphState) -> None:
    from tb_graph_plugin.graph import build_slim_graph

    with _malformed_node_defs(state.what):
        state.slim = build_slim_graph(state.graph_def)


@contextlib.contextmanager
def _malformed_node_defs(what: str):
    """A NodeDef protobuf cannot parse (damage inside an attr, seen when it is first read) is
    the GraphDef's fault: a 400 saying so, as a damaged GraphDef gets at its split."""
    from tb_graph_plugin.graph.node_defs import MalformedNodeDef

    try:
        yield
    except MalformedNodeDef as e:
        raise errors.InvalidArgumentError(f"malformed GraphDef in {what}: {e}") from None


def _hierarchy_options(payload: dict):
    from tb_graph_plugin.hierarchy import HierarchyOptions

    options = dict(payload.get("hierarchy_options", {}))
    if "ungrouped_series" in options:  # a list on the wire, a frozenset in the options
        options["ungrouped_series"] = frozenset(options["ungrouped_series"])
    return HierarchyOptions(**options)


@contextlib.contextmanager
def _too_deep(what: str):
    from tb_graph_plugin.hierarchy.scopes import ScopesTooDeep

    try:
        yield
    except ScopesTooDeep as e:
        raise limits.GraphTooDeepError(what, str(e)) from None


def _hierarchy(state: GraphState, between: Optional[Callable[[], None]] = None) -> None:
    """The Hierarchy, with step stats joined for a profile (``between()`` between its steps)."""
    from tb_graph_plugin.hierarchy import build_hierarchy, join_step_stats

    progress = None if between is None else (lambda step, fraction: between())
    with _too_deep(state.what):
        hierarchy = build_hierarchy(state.slim, state.hierarchy_options, progress=progress)
    if state.run_metadata:
        rm = run_metadata.parse_run_metadata(state.run_metadata, f"step stats of {state.what}")
        state.unmatched_stats = join_step_stats(hierarchy, rm)
        state.run_metadata = None
    state.hierarchy = hierarchy


BUILD: Pipeline[GraphState] = Pipeline("graph_state", [
    Step("parse", _parse),
    Step("slim_graph", _slim_graph),
    # here for a profile (its first view shows step stats) and a diff; otherwise after the first
    # answer, which may be a first view drawn from a partial Hierarchy
    Step("hierarchy", _hierarchy, when=lambda state: state.keep_protos or bool(state.run_metadata)),
])


def graph_report(state: GraphState) -> dict:
    """What is wrong with the graph itself, for ``scene.stats`` (the UI's warning line): made once
    per GraphState (it reads every op; each scene and delta of the graph answers it)."""
    if state.report is None:
        state.report = _graph_report(state)
    return state.report


def _graph_report(state: GraphState) -> dict:
    slim = state.slim
    dangling, references = slim.split_dangling()  # PyTorch module references are no damage
    return {
        "dangling_inputs": len(dangling),
        "dangling_examples": [f"{slim.names[d.node]} <- {d.input}" for d in dangling[:5]],
        "module_references": len(references),
        "duplicate_names": slim.duplicate_names[:20],
        "unmatched_step_stats": state.unmatched_stats,
        "graph_breaks": slim.ops.count("graph_break"),  # torch.compile's (tb_graph_plugin.torch.add_compiled_graph)
        "kernels": len(set(slim.kernels) - {None}),  # its Inductor kernels: the UI offers "group by kernel"
    }


def _scene_options(args: dict):
    """SceneOptions from a scene job's arguments (``extract``, ``float``: the route's on/off)."""
    import dataclasses

    from tb_graph_plugin.layout.scene import SceneOptions

    o = SceneOptions(extract=args.get("extract", True))
    return o if args.get("float", True) else dataclasses.replace(o, float_fanout=0)


def scene_task(state: GraphState, args: dict, progress: Progress) -> str:
    from tb_graph_plugin.layout.scene import build_scene

    ref = wire.GraphRef(**dict(args["graph"], kind=wire.GraphKind(args["graph"]["kind"])))
    if args.get("first_view") and not args["expanded"] and state.hierarchy is None:
        scene = _early_first_view(state, ref, args, progress)
        if scene is not None:
            return scene
    h, cache = state.hierarchy_for(args["expanded"], progress)
    progress("layout", 0.7)
    missing = [g for g in args["expanded"] if not h.has(g) or not h.is_group(g)]
    if missing:
        raise errors.InvalidArgumentError(f"cannot expand {missing[0]!r}: no such group in this graph")
    options = _scene_options(args)
    if args.get("first_view"):
        from tb_graph_plugin.layout.scene.first_scene import build_first_view_scene

        scene = build_first_view_scene(h, ref, options=options, cache=cache)
    else:
        scene = build_scene(h, ref, args["expanded"], options=options, cache=cache)
    scene.stats.update(graph_report(state))
    return _with_timings(state, scene)


def _early_first_view(state: GraphState, ref: wire.GraphRef, args: dict, progress: Progress) -> Optional[str]:
    """The first view drawn from a partial Hierarchy (``GraphState.first_view_hierarchy``), or
    None when that view needs the whole one. The partial one is dropped after this scene, or
    kept to build its likeliest next group in (``GraphState.build_ahead``)."""
    from tb_graph_plugin.layout.scene import LayoutCache
    from tb_graph_plugin.layout.scene.first_scene import build_first_view_scene
    from tb_graph_plugin.layout.scene.first_view import expand_ahead_group

    h = state.first_view_hierarchy(progress)
    if h is None:
        return None
    state.settling.active = True  # the worker settles the build once this answer has gone out
    progress("layout", 0.7)
    scene = build_first_view_scene(h, ref, options=_scene_options(args), cache=LayoutCache())
    scene.stats.update(graph_report(state))
    group = expand_ahead_group(h)
    if group is not None:
        state.ahead_plan = (h, group)
    return _with_timings(state, scene)


def _on_whole(task: Callable[[GraphState, dict, Progress], str]) -> Callable[[GraphState, dict, Progress], str]:
    """``task`` run on the whole Hierarchy (built first if a first view went out without it)."""
    def run(state: GraphState, args: dict, progress: Progress) -> str:
        state.whole_hierarchy(progress)
        return task(state, args, progress)

    run.__doc__ = task.__doc__
    return run


def _with_timings(state: GraphState, scene) -> str:
    """The scene as JSON, its ``stats["timings"]`` saying where the time went (seconds): how
    the graph was built (``read`` .. ``hierarchy``, the same for every scene of the graph) and
    this scene's ``layout``. The first scene of a graph logs them at debug level, with the
    time the JSON took."""
    timings = Timings(state.timings)
    timings.add("layout", scene.stats.get("layout_seconds", 0.0))
    scene.stats["timings"] = {k: round(v, 4) for k, v in timings.items()}
    start = time.perf_counter()
    body = wire.to_json(scene)
    if state.first_scene:
        state.first_scene = False
        timings.add("to_json", time.perf_counter() - start)
        logger.debug("%s: first scene after %s", state.what, timings)
    return body


def _node_name(h, name: str) -> str:
    """The hierarchy node a scene name stands for: the name itself, or for a copy drawn beside
    another node (an embedding or floated parameter named ``node@beside``) the node before an ``@``."""
    if h.has(name):
        return name
    at = name.find("@")
    while at > 0:
        if h.has(name[:at]):
            return name[:at]
        at = name.find("@", at + 1)
    raise errors.NotFoundError(f"no node {name!r} in this graph")


def node_task(state: GraphState, args: dict, progress: Progress) -> str:
    from tb_graph_plugin.hierarchy import node_details

    progress("node", 0.9)
    h = state.hierarchy_for_node(args["name"], progress)
    name = _node_name(h, args["name"])
    with _malformed_node_defs("this graph"):
        details = node_details(h, name)
        if args.get("cost"):
            from tb_graph_plugin.hierarchy.cost import node_cost

            progress("cost", 0.95)
            details.cost = node_cost(h, name)
        return wire.to_json(details)


def search_task(state: GraphState, args: dict, progress: Progress) -> str:
    """Nodes whose name, label or op type (name alone with ``names_only``) matches the RE2 regex
    ``q`` ignoring case, and whose op type contains ``op`` (ignoring case: ``relu`` finds
    ``Relu``, ``Relu6`` and ``aten::relu_``); groups too when no ``op``. With ``pattern``: the
    matches of a chain of steps (``search.search_pattern``), ``q`` and ``op`` unused.
    Linear time, at most ``search.SEARCH_BUDGET_S`` of walking (see ``api/search.py``)."""
    progress("search", 0.9)
    if args.get("pattern"):  # a chain of steps: graph.pattern
        return wire.to_json(search.search_pattern(state, args["pattern"]))
    return wire.to_json(search.search_graph(state, args.get("q") or "", args.get("op"),
                                            names_only=bool(args.get("names_only"))))


def scene_delta_task(state: GraphState, args: dict, progress: Progress) -> str:
    """Expand/collapse: the nodes that changed from expansion state ``from`` to ``expanded``."""
    from tb_graph_plugin.layout.scene import scene_delta

    h, cache = state.hierarchy_for([*args["from"], *args["expanded"]], progress)
    progress("layout", 0.7)
    ref = wire.GraphRef(**dict(args["graph"], kind=wire.GraphKind(args["graph"]["kind"])))
    for key in ("from", "expanded"):
        missing = [g for g in args[key] if not h.has(g) or not h.is_group(g)]
        if missing:
            raise errors.InvalidArgumentError(f"`{key}` names {missing[0]!r}: no such group in this graph")
    options = _scene_options(args)
    delta = scene_delta(h, ref, args["from"], args["expanded"], options=options, cache=cache)
    delta.stats.update(graph_report(state))  # the same graph report as /scene
    return wire.to_json(delta)


def diff_task(state: GraphState, args: dict, progress: Progress) -> str:
    """Graph B (``state``) against graph A (``state.base``): ``wire.GraphDiff``."""
    from tb_graph_plugin.diff import diff_hierarchies

    progress("diff", 0.8)
    if state.base is None:
        raise errors.InvalidArgumentError("a diff job needs two graphs")

    def ref(plain):
        return wire.GraphRef(**dict(plain, kind=wire.GraphKind(plain["kind"])))

    answer = diff_hierarchies(state.base.hierarchy, state.hierarchy, ref(args["base"]), ref(args["graph"]))
    return wire.to_json(answer)


def node_data_task(state: GraphState, args: dict, progress: Progress) -> str:
    """One step of node data on this graph: ``api.node_data.on_hierarchy`` (the values of the
    nodes the expansion state ``expanded`` shows, aggregated to groups by ``agg``)."""
    from tb_graph_plugin.api import node_data

    progress("cost" if args.get("cost") else "node_data", 0.8)
    with _malformed_node_defs("this graph"):  # a cost colour mode reads every op's NodeDef
        return node_data.on_hierarchy(state, args)


TASKS: dict[str, Callable[[GraphState, dict, Progress], str]] = {
    "scene": scene_task,
    "scene_delta": scene_delta_task,
    "node": node_task,
    "search": _on_whole(search_task),
    "diff": _on_whole(diff_task),
    "node_data": _on_whole(node_data_task),
}
