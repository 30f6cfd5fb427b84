"""The SlimGraph data model: a GraphDef's ops and edges, flat, with integer ids.

Vocabulary follows TensorBoard's Graph dashboard documentation
([TB-GRAPH-DOC], see docs/references.md): a **SlimGraph** holds **OpNode**s and **BaseEdge**s and
no groups. Storage is columnar (one column per field, indexed by the op's integer id: numpy
arrays for the ints, Python lists for the strings) so a 140k-op graph costs a few columns, not
140k objects; ``OpNode`` and ``BaseEdge`` are
small views built on demand by :meth:`SlimGraph.node` and :meth:`SlimGraph.edge`.

Ids
    Op ids are ``0 .. n_nodes-1`` in GraphDef order (then the function library nodes).
    Edge ids are ``0 .. n_edges-1``. Both are stable for one SlimGraph.

Names
    ``names[i]`` is the normalized name the hierarchy uses (after the stock ``A`` ->
    ``A/(A)`` rename when ``A`` is also a namespace); ``original_names[i]`` is the
    NodeDef's name as written.

Embeddings
    Ops "visually less significant" sit beside the op they feed (in-embeddings: ``Const``,
    PyTorch ``prim::GetAttr`` / ``prim::ListConstruct`` / ``prim::Constant``, TF2 resource
    ``_Arg`` handles and their ``ReadVariableOp``) or read (out-embeddings: ``*Summary``).
    ``embedding[i]`` says which, ``owner[i]`` is the main op it is drawn beside (its one
    position), ``in_embeddings[o]`` / ``out_embeddings[o]`` list every embedding beside
    main op ``o`` (a Const read by three ops is listed beside all three, like nGraph's
    per-use copies, but owned by the first). Edges touching an embedding are not base
    edges: an edge from a main op into an embedding is re-targeted to the embedding's
    owner (stock: "move the inputs of the in-embedding into incoming edges of the main
    node"); edges between embeddings / from an embedding to its consumers are kept in
    ``embedding_edges`` for the info pane.

Scopes
    ``op_scopes`` numbers the scope directly holding each MAIN op (its normalized name up to the
    last ``/``), so the hierarchy's scope phase splits no name again (:class:`OpScopes`).
"""

from __future__ import annotations

import dataclasses
from typing import Optional, Union

import numpy as np

from tb_graph_plugin.graph.columns import EmbeddingEdges, OpLists
from tb_graph_plugin.graph.node_defs import NodeDefs
from tb_graph_plugin.pipeline import Timings
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole

__all__ = [
    "FUNCTION_LIBRARY_PREFIX",
    "SlimGraphOptions",
    "OpNode",
    "BaseEdge",
    "DanglingInput",
    "MODULE_REFERENCE_OPS",
    "FunctionInfo",
    "OpScopes",
    "EmbeddingEdges",
    "OpLists",
    "SlimGraph",
]

FUNCTION_LIBRARY_PREFIX = "__function_library__"

# Stock reference-edge ops (input 0 of these is a reference edge).
REFERENCE_EDGE_OPS = frozenset(
    {
        "Assign", "AssignAdd", "AssignSub", "assign", "assign_add", "assign_sub",
        "count_up_to", "ScatterAdd", "ScatterSub", "ScatterUpdate", "scatter_add",
        "scatter_sub", "scatter_update",
    }
)


@dataclasses.dataclass
class SlimGraphOptions:
    """Switches of :func:`tb_graph_plugin.graph.build_slim_graph` (all on by default)."""

    in_embedding_ops: frozenset = frozenset({"Const"})
    """Ops drawn beside their consumer (stock: ``Const``)."""
    out_embedding_pattern: str = r"^[a-zA-Z]+Summary$"
    """Ops drawn beside their producer (stock: ``*Summary``)."""
    embed_torch_noise: bool = True
    """PyTorch ``prim::GetAttr`` / ``prim::ListConstruct`` / ``prim::Constant`` (and
    ``prim::TupleConstruct`` of them) become in-embeddings when all their inputs are."""
    torch_noise_ops: frozenset = frozenset(
        {"prim::GetAttr", "prim::ListConstruct", "prim::Constant", "prim::TupleConstruct",
         # tb_graph_plugin.torch / .pt2: parameters, buffers, lifted constants (ingest/exported_program.py)
         "torch::parameter", "torch::buffer", "torch::constant", "torch::optimizer_state",
         # tb_graph_plugin.jax / .mlir: parameters by pytree path (ingest/jax_program.py), and
         # StableHLO constants (ingest/stablehlo.py)
         "jax::parameter", "stablehlo::constant"}
    )
    embed_variable_reads: bool = True
    """TF2 resource-typed ``_Arg``/``Placeholder`` handles and the ``ReadVariableOp`` that
    reads them become in-embeddings of the reading op."""
    place_plumbing: bool = True
    """PyTorch ``prim::Tuple*`` / ``prim::List*`` plumbing written above its producers (no scope
    after tracing) is renamed into their deepest shared scope (``graph/plumbing.py``)."""
    rename_namespace_clashes: bool = True
    """``A`` -> ``A/(A)`` when ``A`` is also a namespace of MAIN ops (stock behaviour)."""
    function_library: bool = True
    """Add ``__function_library__<fn>/...`` nodes for ``GraphDef.library.function``."""


@dataclasses.dataclass(slots=True)
class OpNode:
    """View of one op of a SlimGraph (built on demand, not stored)."""

    id: int
    name: str
    original_name: str
    op: str
    device: Optional[str]
    xla_cluster: Optional[str]
    output_shapes: Optional[list]  # one entry per output: tuple of dims (-1 unknown) or None
    embedding: EmbeddingRole
    owner: int  # main op an embedding is drawn beside; -1 for main ops
    function: Optional[str]  # library function this node belongs to, if any
    function_input_index: Optional[int] = None
    function_output_index: Optional[int] = None


@dataclasses.dataclass(slots=True)
class BaseEdge:
    """View of one base edge: tensor ``src:src_output`` flows into ``dst``."""

    id: int
    src: int
    dst: int
    kind: EdgeKindCode
    src_output: int
    size: int  # product of the tensor's dims (unknown dims count 1); 1 if no shape
    shape: Optional[tuple]  # the tensor's shape if known


# PyTorch's add_graph writes each module attribute read as ``prim::GetAttr`` whose input names
# the module instance (``.../weight/conv1.1``), which is never written as a node: every PyTorch
# graph has such inputs. They are module references, counted apart, not reported as damage.
MODULE_REFERENCE_OPS = frozenset({"prim::GetAttr"})


@dataclasses.dataclass(slots=True)
class DanglingInput:
    """An input naming a node absent from the GraphDef; kept and reported, no edge made.
    ``SlimGraph.split_dangling`` tells damage from PyTorch module references."""

    node: int
    input: str  # the raw input string, e.g. "missing/op:1"


@dataclasses.dataclass
class FunctionInfo:
    """One ``GraphDef.library.function`` turned into ``__function_library__`` nodes."""

    name: str
    node_ids: list[int] = dataclasses.field(default_factory=list)
    input_arg_ids: list[int] = dataclasses.field(default_factory=list)
    output_arg_ids: list[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class OpScopes:
    """The scope directly holding each MAIN op, numbered (``graph.names.index_scopes``): a MAIN op
    named ``a/b/c`` is in scope ``a/b``; one named ``c`` or ``/c`` in scope ``""`` (the root's).

    Invariants: ``names`` are distinct and in the order of their first op (``first_op`` ascends);
    ``of_op[i]`` is ``-1`` exactly when op ``i`` is an embedding; ``names[of_op[i]]`` is
    ``slim.names[i]`` cut at its last ``/`` (``""`` when that ``/`` is the first character or
    there is none).
    """

    names: list[str] = dataclasses.field(default_factory=list)  # distinct scopes of MAIN ops
    of_op: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int32))  # int32 per op id
    first_op: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))  # op id per scope


NodeRef = Union[int, str]


class SlimGraph:
    """Flat ops + base edges of one GraphDef. Built by ``graph.build_slim_graph``.

    Per-op columns (index = op id): ``names``, ``original_names``, ``ops``, ``devices``,
    ``xla_clusters``, ``kernels``, ``output_shapes``, ``embedding``, ``owner``, ``node_defs`` (the source
    ``NodeDef`` or None for synthetic nodes, for attrs in the info pane: a ``graph.node_defs.NodeDefs``,
    a worker keeps each node's encoding and parses it when asked), ``functions_of``; and
    ``op_scopes`` (:class:`OpScopes`: each MAIN op's scope as an int32 column of codes).

    Per-edge columns (index = edge id): ``edge_src``, ``edge_dst``, ``edge_kind``,
    ``edge_output``, ``edge_size``. They, ``embedding`` (int8) and ``owner`` are numpy arrays (no
    Python object per op or edge; a reader going element by element takes ``.tolist()`` first or
    casts with ``int``, so no numpy scalar reaches the wire); ``embedding_edges`` is
    :class:`EmbeddingEdges`, four such columns; ``in_embeddings``/``out_embeddings`` are
    :class:`OpLists`. Kinds and roles are the ints of
    ``wire.EdgeKindCode`` and ``wire.EmbeddingRole``; the ``node``/``edge`` views give the enum
    members.
    """

    def __init__(self) -> None:
        self.names: list[str] = []
        self.original_names: list[str] = []
        self.ops: list[str] = []
        self.devices: list[Optional[str]] = []
        self.xla_clusters: list[Optional[str]] = []
        # attr ``_kernel``: the fused kernel that computed the op (torch.compile with Inductor,
        # ``tb_graph_plugin.torch.add_compiled_graph``); read with ``_output_shapes``, which such ops have
        self.kernels: list[Optional[str]] = []
        self.output_shapes: list[Optional[list]] = []
        self.embedding: np.ndarray = np.zeros(0, dtype=np.int8)  # EmbeddingRole per op id
        self.owner: np.ndarray = np.zeros(0, dtype=np.int64)  # the main op an embedding sits beside; -1
        self.node_defs: NodeDefs = NodeDefs()  # graph.node_defs: parsed, or a worker's node encodings
        self.functions_of: list[Optional[str]] = []
        self.function_input_index: dict[int, int] = {}
        self.function_output_index: dict[int, int] = {}
        self.index: dict[str, int] = {}  # original AND normalized name -> op id
        self.in_embeddings: OpLists = OpLists()  # the in-embeddings beside each main op
        self.out_embeddings: OpLists = OpLists()
        self.edge_src: np.ndarray = np.zeros(0, dtype=np.int64)
        self.edge_dst: np.ndarray = np.zeros(0, dtype=np.int64)
        self.edge_kind: np.ndarray = np.zeros(0, dtype=np.int64)  # EdgeKindCode ints
        self.edge_output: np.ndarray = np.zeros(0, dtype=np.int64)
        self.edge_size: np.ndarray = np.zeros(0, dtype=np.int64)
        self.embedding_edges: EmbeddingEdges = EmbeddingEdges()  # raw edges with an embedding at one end
        self.dangling: list[DanglingInput] = []
        self.duplicate_names: list[str] = []  # NodeDef names seen twice (first one kept)
        self.functions: dict[str, FunctionInfo] = {}
        self.op_scopes: OpScopes = OpScopes()  # graph.names.index_scopes, after the renames
        self.has_shape_info: bool = False
        self.cost_memo: Optional[object] = None  # graph.cost.cached_op_costs: every op's cost, when first asked
        self.pattern_memo: Optional[object] = None  # graph.pattern: the columns pattern matching reads, when first asked
        self.timings: Timings = Timings()  # seconds per pipeline step (graph.PIPELINE)

    # ---- sizes -------------------------------------------------------------------------
    @property
    def n_nodes(self) -> int:
        return len(self.names)

    @property
    def n_edges(self) -> int:
        return len(self.edge_src)

    # ---- lookups -----------------------------------------------------------------------
    def id_of(self, name: NodeRef) -> int:
        """Op id of a normalized or original name (ints pass through). KeyError if absent."""
        if isinstance(name, (int, np.integer)):  # an id read off a numpy column too
            return int(name)
        return self.index[name]

    def node(self, ref: NodeRef) -> OpNode:
        i = self.id_of(ref)
        return OpNode(
            id=i,
            name=self.names[i],
            original_name=self.original_names[i],
            op=self.ops[i],
            device=self.devices[i],
            xla_cluster=self.xla_clusters[i],
            output_shapes=self.output_shapes[i],
            embedding=EmbeddingRole(int(self.embedding[i])),
            owner=int(self.owner[i]),
            function=self.functions_of[i],
            function_input_index=self.function_input_index.get(i),
            function_output_index=self.function_output_index.get(i),
        )

    def edge(self, e: int) -> BaseEdge:
        src, out = int(self.edge_src[e]), int(self.edge_output[e])
        return BaseEdge(
            id=e,
            src=src,
            dst=int(self.edge_dst[e]),
            kind=EdgeKindCode(int(self.edge_kind[e])),
            src_output=out,
            size=int(self.edge_size[e]),
            shape=self.shape_of(src, out),
        )

    def split_dangling(self) -> tuple[list[DanglingInput], list[DanglingInput]]:
        """``(dangling inputs, module references)``: the inputs naming absent nodes that are
        damage, and those of ``MODULE_REFERENCE_OPS`` (PyTorch naming a module instance). The one
        split both ``/scene``'s stats and ``tb-graph summary`` count."""
        dangling, references = [], []
        for d in self.dangling:
            (references if self.ops[d.node] in MODULE_REFERENCE_OPS else dangling).append(d)
        return dangling, references

    def shape_of(self, node: int, output: int) -> Optional[tuple]:
        shapes = self.output_shapes[node]
        if shapes is None or output < 0 or output >= len(shapes):
            return None
        return shapes[output]

    def main_node_ids(self) -> list[int]:
        """Ids of the ops that are not embeddings (the ones the hierarchy places)."""
        return np.flatnonzero(self.embedding == EmbeddingRole.MAIN).tolist()

    def op_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op] = counts.get(op, 0) + 1
        return counts

    def out_edges(self) -> list[list[int]]:
        """Adjacency (edge ids by source op), computed on demand."""
        adj: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for e, s in enumerate(self.edge_src.tolist()):
            adj[s].append(e)
        return adj

    def in_edges(self) -> list[list[int]]:
        adj: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for e, d in enumerate(self.edge_dst.tolist()):
            adj[d].append(e)
        return adj
