"""The JSON wire format between the plugin's routes and the frontend, declared once.

Every payload the frontend reads is one of these dataclasses turned into JSON with
``to_json``; ``frontend/src/api/types.ts`` mirrors them field for field. Bump
``WIRE_VERSION`` when a field changes meaning or disappears.

Coordinates are absolute, in pixels, y growing downwards; ``x``/``y`` are a node's
centre (the convention of dagre and Graphviz).

A field declared with ``metadata=OMIT_NONE`` is left out of the JSON when it is None (an
optional ``field?:`` in TypeScript); every other field is always written.

This module is below every stage: any stage may use its types; it imports none of them.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any, Literal, Optional

__all__ = [
    "WIRE_VERSION", "GraphKind", "NodeKind", "EdgeKind", "EdgeKindCode", "EmbeddingRole",
    "JobState", "Inferred", "OMIT_NONE", "GraphRef", "StepListing", "TagListing", "RunListing",
    "Listing", "SceneNode", "SceneEdge", "Scene", "SceneDelta", "Job", "NodeAttr", "NodeIo",
    "NodeCost", "NodeDetails", "SearchHit", "SearchAnswer", "UploadAnswer", "ErrorAnswer", "DiffStatus",
    "DiffEntry", "GraphDiff", "NodeDataAgg", "NodeDataTag", "NodeDataListing", "NodeDataColorStop",
    "NodeDataEntry", "NodeDataPoint", "NodeDataAnswer", "to_json", "to_plain"
]

WIRE_VERSION = 1


class GraphKind(str, enum.Enum):
    """Which graph of a (run, tag) is meant."""

    OP = "op"  # a GraphDef: run graph, or trace_export function graphs merged
    CONCEPTUAL = "conceptual"  # a Keras model.to_json(), converted to a GraphDef
    PROFILE = "profile"  # an op graph joined with RunMetadata step stats


class NodeKind(str, enum.Enum):
    """What a node is: the one declaration of node kinds, used by hierarchy, layout and api.

    A ``str`` enum: a member equals (and hashes as) its value, and ``to_json`` writes the value.
    """

    OP = "op"
    META = "meta"
    SERIES = "series"
    BRIDGE = "bridge"
    IN_EMBEDDING = "in_embedding"
    OUT_EMBEDDING = "out_embedding"
    STUB = "stub"  # end of a long skip edge cut into labelled stubs


class EdgeKind(str, enum.Enum):
    """What an edge carries: the one declaration of edge kinds. ``code`` is its int column value."""

    DATA = "data"
    CONTROL = "control"
    REFERENCE = "reference"

    @property
    def code(self) -> "EdgeKindCode":
        return EdgeKindCode[self.name]


class EdgeKindCode(enum.IntEnum):
    """``EdgeKind`` as the int stored in numpy columns (``SlimGraph.edge_kind``), member for
    member (same names); ``kind`` is the ``EdgeKind``. The ints are stable: do not renumber."""

    DATA = 0
    CONTROL = 1
    REFERENCE = 2

    @property
    def kind(self) -> EdgeKind:
        return EdgeKind[self.name]


class EmbeddingRole(enum.IntEnum):
    """Where an op is drawn, as the int stored in ``SlimGraph.embedding``: in the main graph, or
    beside the op it feeds (in-embedding) or that feeds it (out-embedding). ``node_kind`` is the
    ``NodeKind`` a node of that role is drawn as. The ints are stable: do not renumber."""

    MAIN = 0
    IN_EMBEDDING = 1
    OUT_EMBEDDING = 2

    @property
    def node_kind(self) -> NodeKind:
        return NodeKind.OP if self is EmbeddingRole.MAIN else NodeKind[self.name]


# How a group that is no ``/`` scope was found: "name" from layer-name indices, "dataflow" as a
# region of the dataflow between two cut points, "source" a PyTorch function call's ops,
# "library" the top level's library functions gathered; "" for scopes and ops.
Inferred = Literal["", "name", "dataflow", "source", "library", "kernel"]

OMIT_NONE = {"omit_none": True}  # field metadata: leave the field out of the JSON when None


class JobState(str, enum.Enum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclasses.dataclass
class GraphRef:
    """Names one graph the server can build: the key of every per-graph route.

    ``run`` is ``"__upload__"`` and ``tag`` the upload id for uploaded graphs.
    ``step`` is None for "the latest step".
    """

    run: str
    tag: str
    kind: GraphKind
    step: Optional[int] = None


@dataclasses.dataclass
class CompileFacts:
    """What ``torch.compile`` made of the call a run graph shows, as
    ``tb_graph_plugin.torch.add_compiled_graph`` wrote it beside the graph (``metadata.COMPILE_FACTS``)."""

    graphs: int  # Dynamo graphs run, recompilations included
    graph_breaks: int
    recompilations: int
    kernels: int  # Inductor kernels the ops went into (0: not compiled by Inductor)


@dataclasses.dataclass
class StepListing:
    step: int
    wall_time: float
    compile: Optional[CompileFacts] = None  # a torch.compile run graph's (run graph tag only)


@dataclasses.dataclass
class TagListing:
    """What exists for one (run, tag): same flags as the stock ``/info``, plus steps."""

    tag: str
    run_graph: bool
    op_graph: bool
    conceptual_graph: bool
    profile: bool
    steps: list[StepListing]


@dataclasses.dataclass
class RunListing:
    run: str
    tags: list[TagListing]


@dataclasses.dataclass
class Listing:
    """Answer of ``/graphs``: every run and tag with graph data, and its steps."""

    runs: list[RunListing]
    # The graph to open first: the first run's first tag with an op graph, else with a
    # conceptual graph, else with a profile (what the server warms up before it is asked).
    default: Optional[GraphRef] = None
    # Where the data comes from, as the data provider says (``--logdir``): what the browser keys
    # what it keeps per logdir by (bookmarks).
    data_location: str = ""
    version: int = WIRE_VERSION


@dataclasses.dataclass
class SceneNode:
    name: str  # the hierarchy name, unique; "" is never used (root is "__root__")
    label: str  # short text to draw (last name segment, series pattern, ...)
    kind: NodeKind
    x: float
    y: float
    width: float
    height: float
    parent: Optional[str]  # name of the expanded group holding it; None at top level
    expanded: bool = False
    cardinality: int = 1  # number of ops inside (1 for an op)
    op: Optional[str] = None
    device: Optional[str] = None
    xla_cluster: Optional[str] = None
    template: Optional[str] = None  # structural template id, same id = same structure
    compute_time_us: Optional[float] = None
    memory_bytes: Optional[int] = None
    tpu_compatible: Optional[bool] = None
    extracted: bool = False  # drawn in a side column (auxiliary node)
    of: Optional[str] = None  # for embeddings, bridges, stubs: the node they stand beside / for
    artificial: bool = False  # a group made by splitting a wide group (``adam [1-1000]``), not a scope
    inferred: Inferred = ""  # "name": recovered from layer-name indices; "dataflow": a region of the dataflow;
    # "source": ops a PyTorch module computes through one function call (``create_causal_mask()``);
    # "library": the top level's library functions, gathered (``ƒ library``); "kernel": the ops one fused kernel computes (``group=kernels``)


@dataclasses.dataclass
class SceneEdge:
    source: str
    target: str
    points: list[list[float]]  # [[x, y], ...] from source border to target border
    kind: EdgeKind
    width: float  # stroke width in px, from summed tensor size
    label: Optional[str] = None  # shape label, e.g. "?×128", "3 tensors"
    count: int = 1  # number of base edges bundled
    reversed: bool = False  # drawn against the rank direction: a back edge of a cycle


@dataclasses.dataclass
class Scene:
    """The laid-out graph for one expansion state; the frontend draws exactly this."""

    graph: GraphRef
    expanded: list[str]
    nodes: list[SceneNode]
    edges: list[SceneEdge]
    width: float
    height: float
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)  # op count, timings
    version: int = WIRE_VERSION


@dataclasses.dataclass
class SceneDelta:
    """Answer to expand/collapse: only what changed against the scene the client has."""

    graph: GraphRef
    expanded: list[str]
    upserted_nodes: list[SceneNode]
    removed_nodes: list[str]
    edges: list[SceneEdge]  # the full edge list (cheap), replacing the client's
    width: float
    height: float
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)  # like Scene.stats
    version: int = WIRE_VERSION


@dataclasses.dataclass
class Job:
    """Answer (HTTP 202) while work for a request runs in the background."""

    job_id: str
    state: JobState
    stage: str  # "parse", "slim_graph", "hierarchy", "layout", ...
    progress: float  # 0..1
    error: Optional[str] = None
    version: int = WIRE_VERSION


@dataclasses.dataclass
class NodeAttr:
    """One attr of an op (its value in protobuf text format), or of a group (``op:<type>``: how
    many ops of that type it holds). An op attr larger than the server's limit has
    ``elided_bytes`` (its serialized size) instead of a ``value``: exactly one of them is set."""

    key: str
    value: Optional[str] = dataclasses.field(default=None, metadata=OMIT_NONE)
    elided_bytes: Optional[int] = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclasses.dataclass
class NodeIo:
    """One input or output of the node in the info pane: the node at the other end.

    For an op: one base edge or edge to an embedding; ``name`` is ``other:N`` for output N > 0.
    For a group: one metaedge of its parent's metagraph, with its ``count`` of base edges and
    summed tensor ``size`` (absent for ops).
    """

    name: str
    shape: Optional[list[int]]  # the tensor's dims, -1 unknown; None when unknown (always for groups)
    kind: EdgeKind
    visible: bool  # False: an edge to or from an embedding, not drawn as an edge
    count: Optional[int] = dataclasses.field(default=None, metadata=OMIT_NONE)
    size: Optional[int] = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclasses.dataclass
class NodeCost:
    """What an op or a group costs (``hierarchy.cost``): parameters (elements and bytes, a shared
    parameter counted once, in its first reader's group), FLOPs (a multiply-add is 2) and the bytes
    of the tensors its ops output; ``unknown_ops`` ops whose cost the graph does not say add 0 to
    those sums and are counted here, by op type in ``unknown_op_types`` (the 20 most frequent)."""

    params: int
    param_bytes: int
    flops: int
    output_bytes: int
    unknown_ops: int
    unknown_op_types: dict[str, int] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class NodeDetails:
    """Answer of ``/node``: what the info pane shows of one op or group."""

    name: str
    kind: NodeKind
    op: Optional[str]
    device: Optional[str]
    attrs: list[NodeAttr]
    inputs: list[NodeIo]
    outputs: list[NodeIo]
    cardinality: int = 1
    series: Optional[str] = None  # the SeriesNode holding it, if any
    template: Optional[str] = None  # a group's template, an op's parent's
    stats: Optional[dict[str, Any]] = None  # compute time, memory, device from a profile
    inferred: Inferred = ""  # as SceneNode.inferred: how a group that is no scope was found
    cost: Optional[NodeCost] = dataclasses.field(default=None, metadata=OMIT_NONE)  # with ``cost=1``
    version: int = WIRE_VERSION


@dataclasses.dataclass
class SearchHit:
    name: str
    op: Optional[str]
    kind: NodeKind
    # groups holding the node, outermost first, root excluded: expand these to show it
    ancestors: list[str] = dataclasses.field(default_factory=list)
    label: str = ""  # what the node is drawn as (SceneNode.label): its name's last part, or its op type


@dataclasses.dataclass
class SearchAnswer:
    """Answer of ``/search``: the first hits, how many matched, and whether every name was
    searched (False when the walk stopped at its time budget: ``total`` then counts the names
    searched so far)."""

    hits: list[SearchHit]
    total: int
    complete: bool = True
    # a pattern search (``pattern=``): the ops along each match's path, first step first; ``hits[k]``
    # is the last op of ``matches[k]``
    matches: Optional[list[list[str]]] = dataclasses.field(default=None, metadata=OMIT_NONE)
    # and the groups holding an op of those matches (root excluded): a closed one is marked
    match_groups: Optional[list[str]] = dataclasses.field(default=None, metadata=OMIT_NONE)
    version: int = WIRE_VERSION


@dataclasses.dataclass
class UploadAnswer:
    graph: GraphRef
    ops: int
    # What was wrong but did not stop the upload (an event file's skipped records, ...).
    warnings: list[str] = dataclasses.field(default_factory=list)
    source: str = "graph file"  # what was opened: "graph file", "run graph (step 0)", ...
    version: int = WIRE_VERSION


class DiffStatus(str, enum.Enum):
    """How a node of one graph compares with the other (``diff``)."""

    SAME = "same"
    CHANGED = "changed"  # matched, and something differs (``DiffEntry.fields``)
    ADDED = "added"  # only in the graph shown (B)
    REMOVED = "removed"  # only in the base graph (A)


@dataclasses.dataclass
class DiffEntry:
    """One node (op or group) that is not the same in both graphs.

    ``name`` is the node's name in B, except for removed nodes (only in A: their name in A).
    ``old_name``: the name in A of a changed node matched under another name (a renamed
    scope, a shifted ``_1`` suffix), else None. ``fields``: what changed, among ``op``,
    ``attrs``, ``shapes``, ``device``, ``inputs``, ``name`` (ops) and ``contents``, ``name``
    (groups). ``anchor``: for a removed node, the B name of the closest group that holds
    its place (the partner of its nearest matched A ancestor; ``__root__`` at top level).
    """

    name: str
    status: DiffStatus
    kind: NodeKind
    fields: list[str] = dataclasses.field(default_factory=list)
    old_name: Optional[str] = None
    anchor: Optional[str] = None


@dataclasses.dataclass
class GraphDiff:
    """Answer of ``/diff``: graph ``graph`` (B) against the ``base`` graph (A).

    ``added``/``changed`` hold B names, ``removed`` A names, each of ops and groups (the root
    group is never listed), sorted; ``entries`` describes each of them. A node in neither
    list is the same in both graphs. ``counts``: ``{"ops"|"groups": {status: n}}``;
    ``matched``: how many op pairs each matching step found (``name``, ``scope``,
    ``suffix``, ``neighbourhood``); ``stats``: timings in seconds.
    """

    base: GraphRef
    graph: GraphRef
    same: bool
    added: list[str]
    removed: list[str]
    changed: list[str]
    entries: list[DiffEntry]
    counts: dict[str, dict[str, int]]
    matched: dict[str, int] = dataclasses.field(default_factory=dict)
    stats: dict[str, Any] = dataclasses.field(default_factory=dict)
    version: int = WIRE_VERSION


NodeDataAgg = Literal["max", "mean", "sum"]


@dataclasses.dataclass
class NodeDataTag:
    """A node-data tag (``/node_data_tags``): a summary's tag in a run, or an upload."""

    run: str
    tag: str
    max_step: int
    source: str = "summary"  # "summary", or "upload <filename>" (run ``__upload__``)


@dataclasses.dataclass
class NodeDataListing:
    tags: list[NodeDataTag]
    version: int = WIRE_VERSION


@dataclasses.dataclass
class NodeDataColorStop:
    """Model Explorer's colour settings: a threshold (``at`` = upper bound of the values drawn in
    ``color``) or a gradient stop (``at`` in 0..1)."""

    at: float
    color: str


@dataclasses.dataclass
class NodeDataEntry:
    """A node and its value: ``value`` None with ``nonfinite`` "nan", "inf" or "-inf"."""

    name: str
    value: Optional[float]
    nonfinite: Optional[str] = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclasses.dataclass
class NodeDataPoint:
    step: int
    value: Optional[float]
    nonfinite: Optional[str] = dataclasses.field(default=None, metadata=OMIT_NONE)


@dataclasses.dataclass
class NodeDataAnswer:
    """``/node_data``: one tag's values at one step for the nodes an expansion state shows (each
    group's own value, else ``agg`` of the values inside it), the top nodes, what matched nothing."""

    graph: GraphRef
    data_run: str
    data_tag: str
    step: int
    steps: list[int]  # every step of the tag
    agg: NodeDataAgg
    values: dict[str, float]  # shown node -> finite value
    nonfinite: dict[str, str]  # shown node -> "nan", "inf" or "-inf"
    range: Optional[list[float]]  # [min, max] of ``values``; None when empty
    top: list[NodeDataEntry]  # the nodes named in the data, largest first (NaN, then inf first)
    matched: int  # names in the data that name a node of the graph
    unmatched: int  # names that name none
    unmatched_names: list[str]  # the first 200 of them
    history: list[NodeDataPoint]  # ``node``'s value at every step (empty without ``node``)
    thresholds: list[NodeDataColorStop]
    gradient: list[NodeDataColorStop]
    version: int = WIRE_VERSION


@dataclasses.dataclass
class ErrorAnswer:
    error: str
    # a 5xx's id, also in the server's log (with the traceback of an unexpected exception)
    request_id: Optional[str] = dataclasses.field(default=None, metadata=OMIT_NONE)
    version: int = WIRE_VERSION


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(v) for f in dataclasses.fields(value)
                if (v := getattr(value, f.name)) is not None or not f.metadata.get("omit_none")}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def to_plain(value: Any) -> Any:
    """A wire dataclass as plain JSON-able dicts and lists."""
    return _plain(value)


def to_json(value: Any) -> str:
    """Serialise a wire dataclass (or a list/dict of them) to compact JSON."""
    return json.dumps(_plain(value), separators=(",", ":"), allow_nan=False)
