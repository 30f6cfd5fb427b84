"""The Hierarchy data model: MetaNodes, SeriesNodes and MetaEdges over a SlimGraph.

Vocabulary follows TensorBoard's Graph dashboard documentation ([TB-GRAPH-DOC] glossary):
a **MetaNode** groups OpNodes and MetaNodes; its *metagraph* is its direct children and
the **MetaEdge**s between them; a **SeriesNode** is a MetaNode whose children are a run
of repeated siblings (``add_[1-5]``, ``TransformerEncoderLayer[0-5]``); a **template** id
is shared by groups with the same internal structure.

Ids (one integer space for everything the hierarchy places)
    ``0 .. n_ops-1``  the SlimGraph's op ids (``hierarchy.slim``), unchanged;
    ``n_ops + k``     group ``k`` (``hierarchy.groups[k]``); the root is group 0, name
                      ``"__root__"``.
    Every method taking a node accepts an id or a hierarchy name.

Names
    A hierarchy name is unique. An op's hierarchy name is its SlimGraph name. A group's
    name is normally its ``/`` scope, but **do not derive ancestry from names**: series
    and inferred scopes (``conv2``, ``conv2_block1`` recovered from Keras 3 token
    prefixes) add groups without renaming their members, so always use ``parent()``.

Placement
    Every main op is the child of exactly one group. Embedding ops (``slim.embedding !=
    MAIN``) are not children of any group: they sit beside ``slim.owner[op]`` and
    ``parent(op)`` returns the owner's group. ``embeddings(op)`` lists them.

MetaEdges
    Every base edge of the SlimGraph is in exactly one MetaEdge: the one between the two
    children of the lowest common ancestor group that contain its ends. Self loops of a
    group (both ends inside the same child) never happen, since that child would be a
    lower common ancestor.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, Optional, Union

import numpy as np

from tb_graph_plugin.graph.labels import op_label
from tb_graph_plugin.graph.model import SlimGraph
from tb_graph_plugin.pipeline import Timings
from tb_graph_plugin.wire import EdgeKind, EmbeddingRole, NodeKind

__all__ = [
    "ROOT_NAME",
    "HierarchyOptions",
    "MetaEdge",
    "MetaEdgeTable",
    "MetaNode",
    "SeriesNode",
    "Hierarchy",
]

ROOT_NAME = "__root__"

NodeRef = Union[int, str]


@dataclasses.dataclass
class HierarchyOptions:
    """Switches of :func:`tb_graph_plugin.hierarchy.build_hierarchy`."""

    series_min_size: int = 5
    """Stock rule: at least this many same-op siblings ``x``, ``x_1`` .. ``x_N`` with
    consecutive numeric suffixes form an op SeriesNode. 0 disables op series."""
    block_series_min_size: int = 4
    """Generalized series: at least this many sibling groups with the same template and
    consecutive indices (``layers.0..N``, ``Block[i]``, ``block1..N``, ``_1.._N``) form a
    block SeriesNode. 0 disables block series."""
    infer_scopes: Optional[bool] = None
    """Scope inference from name tokens (Keras 3 ``conv2_block1_2_bn``): None = automatic
    (a group with at least ``infer_min_siblings`` children whose names share token
    prefixes), True = every group, False = never."""
    infer_min_siblings: int = 12
    """Automatic scope inference looks at groups with at least this many children."""
    infer_min_group: int = 2
    """An inferred group holds at least this many siblings."""
    region_min_children: int = 12
    """Dataflow block inference (``hierarchy.regions``) looks at groups with at least this
    many group children (layers) left after name inference (same switch: ``infer_scopes``)."""
    region_min_size: int = 3
    """A dataflow region becomes a group when it holds at least this many children."""
    templates: bool = True
    """Compute structural templates (bottom-up WL hash of each group's metagraph)."""
    template_rounds: int = 2
    """WL refinement rounds inside each metagraph."""
    ungrouped_series: frozenset[str] = frozenset()
    """Hierarchy names of SeriesNodes not to form (the stock "ungroup this series"): their
    members stay plain children of the parent. Op and block series alike."""
    replicate_copies: bool = True
    """Large sibling groups that are exact copies (a multi-tower graph's towers) are grouped once
    and that grouping replicated into the others (``hierarchy.replicate``: the same tree);
    False: the grouping phases run in each."""
    group_kernels: bool = False
    """Each group's ops that one fused kernel computes (attr ``_kernel``: what
    ``tb_graph_plugin.torch.add_compiled_graph`` writes from Inductor) gathered into a group
    named by the kernel (``hierarchy.kernels``)."""
    split_max_children: int = 1000  # hierarchy.split.DEFAULT_MAX_CHILDREN
    """Wide groups: a group with more children is cut into ordered artificial SplitNodes
    (``hierarchy.split``) so no single layout is huge."""


@dataclasses.dataclass(slots=True)
class MetaEdge:
    """All base edges between two children of one group, bundled.

    ``src``/``dst`` are hierarchy ids of direct children of the group owning the edge.
    """

    src: int
    dst: int
    base_edges: list[int] = dataclasses.field(default_factory=list)  # SlimGraph edge ids
    size: int = 0  # sum of the base edges' tensor sizes
    n_control: int = 0
    n_reference: int = 0

    @property
    def count(self) -> int:
        return len(self.base_edges)

    @property
    def control_only(self) -> bool:
        return self.n_control == len(self.base_edges)

    @property
    def kind(self) -> EdgeKind:
        """``CONTROL`` if only control edges, ``REFERENCE`` if any reference, else ``DATA``."""
        if self.n_control == len(self.base_edges):
            return EdgeKind.CONTROL
        return EdgeKind.REFERENCE if self.n_reference else EdgeKind.DATA


@dataclasses.dataclass(eq=False)
class MetaNode:
    """A group: a ``/`` scope, an inferred token scope, a library function, or the root."""

    id: int
    name: str
    label: str  # short text to draw (last segment / series pattern)
    parent: int  # hierarchy id of the parent group; -1 for the root
    children: list[int] = dataclasses.field(default_factory=list)  # hierarchy ids
    cardinality: int = 0  # main ops inside (recursively); embeddings not counted
    n_embeddings: int = 0  # embedding ops beside ops inside
    depth: int = 0  # distance to the deepest leaf: a group of ops has depth 1
    level: int = 0  # distance from the root: top-level groups have level 1
    template: Optional[str] = None  # shared template id; None if structure is unique
    structure_hash: int = 0  # raw structural hash (equal hash -> same template)
    inferred: str = ""  # "name" (from name tokens), "dataflow" (a region of the children's DAG),
    # "source" (a PyTorch function call's ops), "library" (the top level's library functions),
    # "kernel" (the ops one fused kernel computes: ``hierarchy.kernels``)
    function: Optional[str] = None  # library function name for __function_library__ groups
    has_non_control_edges: bool = False
    compute_time_us: Optional[float] = None  # from a profile join
    memory_bytes: Optional[int] = None
    profile_devices: dict[str, int] = dataclasses.field(default_factory=dict)
    # ``metaedges``: the list once made; until then, where its rows are in a MetaEdgeTable
    _metaedges: Optional[list[MetaEdge]] = dataclasses.field(default=None, repr=False)
    _metaedge_rows: Optional[tuple] = dataclasses.field(default=None, repr=False)  # (table, first, end)

    kind = NodeKind.META

    @property
    def metaedges(self) -> list[MetaEdge]:
        """The MetaEdges between this group's children, made from ``MetaEdgeTable`` rows when first
        read (most groups are never shown: their MetaEdges stay columns)."""
        made = self._metaedges
        if made is None:
            rows = self._metaedge_rows
            made = [] if rows is None else rows[0].make(rows[1], rows[2])
            if self._metaedges is None:  # another thread may have made them meanwhile
                self._metaedges = made
                self._metaedge_rows = None
            made = self._metaedges
        return made

    @metaedges.setter
    def metaedges(self, value: list[MetaEdge]) -> None:
        self._metaedges = value
        self._metaedge_rows = None

    def set_metaedge_rows(self, table: "MetaEdgeTable", first: int, end: int) -> None:
        """This group's MetaEdges are rows ``first .. end - 1`` of ``table`` (made when read)."""
        self._metaedges = None
        self._metaedge_rows = (table, first, end)

    @property
    def is_series(self) -> bool:
        return False


@dataclasses.dataclass(eq=False)
class SeriesNode(MetaNode):
    """A run of repeated siblings; ``children`` are its members in index order.

    ``series_kind`` is ``"op"`` (stock rule: same-op ops ``add_1..add_N``) or ``"block"``
    (generalized: sibling groups with one template and consecutive indices). Members keep
    their own names; ``name`` is ``parent/prefix[start-end]suffix``.
    """

    series_kind: str = "op"
    prefix: str = ""
    suffix: str = ""
    indices: list[int] = dataclasses.field(default_factory=list)  # member i has indices[i]

    kind = NodeKind.SERIES

    @property
    def is_series(self) -> bool:
        return True


@dataclasses.dataclass
class MetaEdgeTable:
    """Every MetaEdge as columns (``metaedges.build_metaedges``), group after group: group ``g``'s
    are rows ``rows[g]`` (first, end), in ``g.metaedges`` order. The templates' hash reads the columns; a
    group's MetaEdge objects are made from its rows when first read (``MetaNode.metaedges``)."""

    src: Any  # int64 array: hierarchy ids
    dst: Any
    kind: Any  # EdgeKindCode of MetaEdge.kind
    size: Any  # int64 array: MetaEdge.size
    n_control: Any
    n_reference: Any
    base_edges: Any  # int64 array: every row's base edge ids, row after row
    base_start: Any  # int64 array (rows + 1): row r's base edges are base_edges[base_start[r]:base_start[r + 1]]
    rows: dict  # group id -> (first row, end row); groups without metaedges absent

    def make(self, first: int, end: int) -> list[MetaEdge]:
        """The MetaEdge objects of rows ``first .. end - 1``."""
        bounds = self.base_start[first:end + 1].tolist()
        ids = self.base_edges[bounds[0]:bounds[-1]].tolist()
        lo = bounds[0]
        return list(map(MetaEdge, self.src[first:end].tolist(), self.dst[first:end].tolist(),
                        [ids[a - lo:b - lo] for a, b in zip(bounds, bounds[1:])],
                        self.size[first:end].tolist(), self.n_control[first:end].tolist(),
                        self.n_reference[first:end].tolist()))


class Hierarchy:
    """Groups + metaedges over a SlimGraph. Built by ``hierarchy.build_hierarchy``."""

    def __init__(self, slim: SlimGraph, options: HierarchyOptions) -> None:
        self.slim = slim
        self.options = options
        self.n_ops = slim.n_nodes
        self.groups: list[MetaNode] = []
        self._op_parent: list[int] = [-1] * slim.n_nodes  # group id holding each main op
        self._op_parent_array: Optional[np.ndarray] = None  # the same as an array, until a change
        self.group_index: dict[str, int] = {}  # group name -> hierarchy id
        self.templates: dict[str, list[int]] = {}  # template id -> group ids (>= 2)
        self.series_of_op: dict[int, int] = {}  # member hierarchy id -> series group id
        self.max_metaedge_size: int = 0
        self.inferred_scopes: bool = False  # scope inference created at least one group
        self.timings: Timings = Timings()  # seconds per pipeline step (hierarchy.PIPELINE)
        self.profile: Optional[dict[str, Any]] = None  # op id -> stats, set by profile join
        self.child_edges: Optional[Any] = None  # base edges placed at their groups (hierarchy.placement.placed_edges)
        self.edge_arrays: Optional[tuple] = None  # (edge_src, edge_dst) as numpy arrays (hierarchy.dataflow)
        self.metaedge_table: Optional[MetaEdgeTable] = None  # hierarchy.metaedges, until block series
        self.histogram_memo: Any = None  # the histograms counted so far (hierarchy.stats.histograms)
        # The groups (by name) the grouping phases 2-3b run in; None: every group. A first view's
        # partial build (``hierarchy.build_first_view_hierarchy``) names the groups that view shows.
        self.grouped_only: Optional[frozenset[str]] = None
        # Group ids the grouping phases leave alone: the copies whose grouping ``replicate`` copies
        # from another's (set between its two steps of the whole build; empty otherwise).
        self.not_regrouped: frozenset[int] = frozenset()
        # Groups (by name, each also in ``grouped_only``) a partial build groups with their whole
        # subtree, as the whole build groups it: every group under them regroups too
        # (``hierarchy.build_expand_ahead_hierarchy``); empty otherwise.
        self.whole_subtrees: frozenset[str] = frozenset()
        # A partial build: each grouped group's child proven an exact copy of a sibling -> the
        # first of its copies (``hierarchy.copies``); None otherwise.
        self.copy_of: Optional[dict[int, int]] = None
        self._under_whole: dict[int, bool] = {}  # group id -> whether under one of them (the first
        # walk's groups: True only; groups made since: either)
        self._whole_upto = 0  # the ids the first walk saw are below this (0: not walked yet)
        self._whole_walk: list[int] = []  # what it saw: the roots and every group under them

    @property
    def op_parent(self) -> list[int]:
        """The group id holding each main op (-1 for an embedding). Changed only through
        :meth:`set_parent` / :meth:`set_parents` or by assigning a new list."""
        return self._op_parent

    @op_parent.setter
    def op_parent(self, parents: list[int]) -> None:
        self._op_parent = parents
        self._op_parent_array = None

    def op_parent_array(self) -> np.ndarray:
        """``op_parent`` as a read-only int64 array, made once until the next change (the last
        phases of a build each read it whole: ~3 ms a conversion at 141k ops)."""
        if self._op_parent_array is None:
            self._op_parent_array = np.asarray(self._op_parent, dtype=np.int64)
            self._op_parent_array.flags.writeable = False
        return self._op_parent_array

    def regroups(self, g: "MetaNode") -> bool:
        """Whether the grouping phases (inferred scopes, regions, op series, splits) run in ``g``:
        in every group (the whole build), or in those named in ``grouped_only`` and those under a
        group of ``whole_subtrees`` (a partial build); never in the copies ``replicate`` groups."""
        if g.id in self.not_regrouped:
            return False
        return self.grouped_only is None or g.name in self.grouped_only or self.under_whole_subtree(g.id)

    def regrouped_groups(self) -> list["MetaNode"]:
        """The groups :meth:`regroups` holds for now, in id order (what a grouping phase visits:
        in a partial build, without asking every group)."""
        if self.grouped_only is None:
            skip = self.not_regrouped
            return [g for g in self.groups if g.id not in skip] if skip else list(self.groups)
        ids = set(self.grouped_ids())
        if self.whole_subtrees:
            self._walk_whole_subtrees()
            ids.update(gid for gid, under in self._under_whole.items() if under)
            ids.update(gid for gid in range(self._whole_upto, self.n_ops + len(self.groups))
                       if self.under_whole_subtree(gid))
        n, groups = self.n_ops, self.groups
        return [groups[gid - n] for gid in sorted(ids - self.not_regrouped)]

    def under_whole_subtree(self, gid: int) -> bool:
        """Whether group ``gid`` lies strictly under a group of ``whole_subtrees``: the groups
        there when first asked (a walk down from each), and a group made since by its parents.
        A phase regroups a group's children under new groups inside that group, so no group
        ever moves into or out of such a subtree."""
        if not self.whole_subtrees:
            return False
        known = self._under_whole
        self._walk_whole_subtrees()
        found = known.get(gid)
        if found is not None or gid < self._whole_upto:
            return bool(found)
        climbed, g, groups, n = [], self.groups[gid - self.n_ops], self.groups, self.n_ops
        while found is None:  # a group made after the walk: up to one the walk saw, or a root
            climbed.append(g.id)
            if g.parent < 0:
                found = False
            elif groups[g.parent - n].name in self.whole_subtrees:
                found = True
            elif g.parent < self._whole_upto:
                found = known.get(g.parent, False)
            else:
                g = groups[g.parent - n]
                found = known.get(g.id)
        known.update(dict.fromkeys(climbed, found))
        return found

    def _walk_whole_subtrees(self) -> None:
        """The first time asked: every group under a group of ``whole_subtrees`` is known to be."""
        if not self._whole_upto:
            self._whole_upto = self.n_ops + len(self.groups)
            roots = self.whole_root_ids()
            self._whole_walk = self.subtree_ids(roots)
            self._under_whole.update(dict.fromkeys((gid for gid in self._whole_walk if gid not in roots), True))

    def whole_root_ids(self) -> list[int]:
        """The ids of the groups of ``whole_subtrees`` (that exist), in name order."""
        return [self.group_index[w] for w in sorted(self.whole_subtrees) if w in self.group_index]

    def whole_subtree_ids(self) -> list[int]:
        """The ids of the groups of ``whole_subtrees`` and of every group under them, as they were
        when first asked (the walk :meth:`under_whole_subtree` reads)."""
        self._walk_whole_subtrees()
        return self._whole_walk

    def subtree_ids(self, roots: list[int]) -> list[int]:
        """The ids of the groups ``roots`` and of every group under them, each subtree in pre-order."""
        return [g.id for r in roots for g in self.pre_order_groups(r)]

    def grouped_ids(self) -> list[int]:
        """The ids of the groups named in ``grouped_only`` that exist (a first view's partial build)."""
        return [self.group_index[name] for name in self.grouped_only or () if name in self.group_index]

    # ---- ids and names -----------------------------------------------------------------
    @property
    def root(self) -> MetaNode:
        return self.groups[0]

    def id_of(self, ref: NodeRef) -> int:
        """Hierarchy id of a name (group name, op name or original op name)."""
        if isinstance(ref, (int, np.integer)):  # an id read off a numpy column too
            return int(ref)
        gid = self.group_index.get(ref)
        if gid is not None:
            return gid
        return self.slim.index[ref]

    def has(self, ref: NodeRef) -> bool:
        try:
            self.id_of(ref)
            return True
        except KeyError:
            return False

    def name_of(self, ref: NodeRef) -> str:
        i = self.id_of(ref)
        if i >= self.n_ops:
            return self.groups[i - self.n_ops].name
        return self.slim.names[i]

    def is_group(self, ref: NodeRef) -> bool:
        return self.id_of(ref) >= self.n_ops

    def group(self, ref: NodeRef) -> MetaNode:
        """The MetaNode/SeriesNode of a group id or name (KeyError for ops)."""
        i = self.id_of(ref)
        if i < self.n_ops:
            raise KeyError(f"{self.slim.names[i]!r} is an op, not a group")
        return self.groups[i - self.n_ops]

    def kind(self, ref: NodeRef) -> NodeKind:
        """``OP``, ``META``, ``SERIES``, ``IN_EMBEDDING`` or ``OUT_EMBEDDING``."""
        i = self.id_of(ref)
        if i >= self.n_ops:
            return self.groups[i - self.n_ops].kind
        return EmbeddingRole(int(self.slim.embedding[i])).node_kind

    # ---- tree --------------------------------------------------------------------------
    def parent(self, ref: NodeRef) -> Optional[int]:
        """Id of the group holding a node (None for the root). Embeddings: owner's group."""
        i = self.id_of(ref)
        if i >= self.n_ops:
            p = self.groups[i - self.n_ops].parent
            return None if p < 0 else p
        owner = int(self.slim.owner[i])
        return self._op_parent[owner if owner >= 0 else i]

    def set_parent(self, child: int, gid: int) -> None:
        """Record that ``gid`` holds ``child`` (an op or group id); the caller edits children lists."""
        if child < self.n_ops:
            self._op_parent[child] = gid
            self._op_parent_array = None
        else:
            self.groups[child - self.n_ops].parent = gid

    def set_parents(self, children: list[int], gid: int) -> None:
        """``set_parent`` for a whole children list (ops only, the usual case: one loop)."""
        if children and max(children) < self.n_ops:
            op_parent = self._op_parent
            for c in children:
                op_parent[c] = gid
            self._op_parent_array = None
        else:
            for c in children:
                self.set_parent(c, gid)

    def ancestors(self, ref: NodeRef) -> list[int]:
        """Group ids from the parent up to and including the root."""
        out = []
        p = self.parent(ref)
        while p is not None:
            out.append(p)
            p = self.parent(p)
        return out

    def children(self, ref: NodeRef) -> list[int]:
        return self.group(ref).children

    def child_names(self, ref: NodeRef) -> list[str]:
        return [self.name_of(c) for c in self.group(ref).children]

    def metaedges(self, ref: NodeRef) -> list[MetaEdge]:
        """MetaEdges between the direct children of a group."""
        return self.group(ref).metaedges

    def embeddings(self, op: NodeRef) -> tuple[list[int], list[int]]:
        """(in-embedding op ids, out-embedding op ids) drawn beside a main op."""
        i = self.id_of(op)
        return self.slim.in_embeddings.get(i, []), self.slim.out_embeddings.get(i, [])

    def cardinality(self, ref: NodeRef) -> int:
        i = self.id_of(ref)
        return self.groups[i - self.n_ops].cardinality if i >= self.n_ops else 1

    def template_of(self, ref: NodeRef) -> Optional[str]:
        i = self.id_of(ref)
        return self.groups[i - self.n_ops].template if i >= self.n_ops else None

    def series_of(self, ref: NodeRef) -> Optional[int]:
        """Id of the SeriesNode a node is a member of, if any."""
        return self.series_of_op.get(self.id_of(ref))

    def label(self, ref: NodeRef) -> str:
        """What to draw: a group's label; an op's ``graph.labels.op_label`` (the last part of its
        name, or its short op type where a PyTorch name was generated: ``816`` -> ``add``)."""
        i = self.id_of(ref)
        if i >= self.n_ops:
            return self.groups[i - self.n_ops].label
        return op_label(self.slim.names[i], self.slim.ops[i])

    def leaf_name(self, ref: NodeRef) -> str:
        """A group's label, an op's last name part: what names say, for naming inferred groups."""
        i = self.id_of(ref)
        if i >= self.n_ops:
            return self.groups[i - self.n_ops].label
        name = self.slim.names[i]
        return name[name.rfind("/") + 1:]

    def leaf_ops(self, ref: NodeRef) -> Iterator[int]:
        """Main op ids inside a group, recursively (depth-first, children order); an op: itself.
        A group holding only ops is taken whole (most do)."""
        i = self.id_of(ref)
        n = self.n_ops
        if i < n:
            return iter((i,))
        groups = self.groups
        out: list[int] = []
        stack = [iter(groups[i - n].children)]
        while stack:
            for c in stack[-1]:
                if c < n:
                    out.append(c)
                    continue
                children = groups[c - n].children
                if children and max(children) < n:
                    out.extend(children)
                else:
                    stack.append(iter(children))
                    break
            else:
                stack.pop()
        return iter(out)

    def walk_groups(self) -> Iterator[MetaNode]:
        """Groups in pre-order from the root."""
        return iter(self.pre_order_groups())

    def pre_order_groups(self, start: Optional[int] = None) -> list[MetaNode]:
        """Groups in pre-order from the root (or from group ``start``, itself included), as a list
        (what the phases that visit every group iterate)."""
        out = []
        n = self.n_ops
        stack = [0 if start is None else start - n]
        groups = self.groups
        append, pop, extend = out.append, stack.pop, stack.extend
        if start is not None:  # a subtree: its children lists read, not every group
            while stack:
                g = groups[pop()]
                append(g)
                extend([c - n for c in reversed(g.children) if c >= n])
            return out
        holders = {g.parent for g in groups}  # most groups hold ops only
        while stack:
            g = groups[pop()]
            append(g)
            if g.id in holders:
                extend([c - n for c in reversed(g.children) if c >= n])
        return out

    def series_nodes(self) -> list[SeriesNode]:
        return [g for g in self.groups if isinstance(g, SeriesNode)]
