"""Property-based tests (hypothesis) over random GraphDefs built with the proto API.

For any structurally valid GraphDef - names with ``/`` (empty segments, scope/op clashes,
numbered siblings that form series), inputs ``x``, ``^x``, ``x:3``, to any node (cycles,
self loops), to absent nodes (dangling), duplicate names - ``build_slim_graph`` and
``build_hierarchy`` never raise, and the hierarchy post-conditions hold
(``tests.hierarchy.invariants.check_invariants``: every main op has exactly one parent group,
children lists partition the placed nodes, every base edge is in exactly one metaedge at the
lowest common ancestor, metaedge sizes and cardinalities add up). For the layout: random DAGs
laid out with ``layout.layout`` have no overlapping boxes and every box inside the drawing.

Bounded: ``max_examples`` and deadlines keep the file well under 60 s.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy
from tb_graph_plugin.layout import Engine, LayoutEdge, LayoutGraph, LayoutNode, LayoutOptions, layout
from tb_graph_plugin.wire import EdgeKindCode, EmbeddingRole
from tests.hierarchy.invariants import check_invariants

SETTINGS = settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])

SEGMENTS = st.sampled_from(
    ["a", "b", "dense", "conv", "add", "add_1", "add_2", "add_3", "add_4", "add_5", "layer0", "layer1",
     "layer2", "layer3", "Block[0]", "Block[1]", "x", "(x)", "", "_", "1", "漢", ".", "while"]
)
OPS = st.sampled_from(
    ["Const", "Placeholder", "Add", "AddV2", "MatMul", "NoOp", "Identity", "Assign", "ScatterAdd",
     "ScalarSummary", "ReadVariableOp", "VarHandleOp", "NextIteration", "Merge", "prim::Constant",
     "prim::GetAttr", "_Arg", "_Retval", "aten::linear"]
)


@st.composite
def names(draw):
    segments = draw(st.lists(SEGMENTS, min_size=1, max_size=4))
    name = "/".join(segments)
    return name if name else "root"


@st.composite
def graph_defs(draw, max_nodes: int = 40):
    node_names = draw(st.lists(names(), min_size=1, max_size=max_nodes))
    graph = graph_pb2.GraphDef()
    for name in node_names:  # duplicates kept on purpose: st.lists may repeat names
        node = graph.node.add(name=name, op=draw(OPS))
        for _ in range(draw(st.integers(0, 4))):
            target = draw(st.one_of(st.sampled_from(node_names), st.just("ghost/op")))
            form = draw(st.sampled_from(["plain", "control", "output", "function"]))
            if form == "control":
                node.input.append("^" + target)
            elif form == "output":
                node.input.append(f"{target}:{draw(st.integers(0, 3))}")
            elif form == "function":
                node.input.append(f"{target}:output:{draw(st.integers(0, 2))}")
            else:
                node.input.append(target)
        if draw(st.booleans()):
            shapes = node.attr["_output_shapes"].list.shape
            for _ in range(draw(st.integers(0, 2))):
                shape = shapes.add()
                for d in draw(st.lists(st.integers(-1, 64), max_size=3)):
                    shape.dim.add(size=d)
        if draw(st.integers(0, 9)) == 0:
            node.device = draw(st.sampled_from(["/device:CPU:0", "/job:w/device:GPU:1", "weird"]))
    return graph


OPTIONS = st.builds(
    HierarchyOptions,
    series_min_size=st.sampled_from([0, 2, 5]),
    block_series_min_size=st.sampled_from([0, 2, 4]),
    infer_scopes=st.sampled_from([None, True, False]),
    infer_min_siblings=st.sampled_from([2, 12]),
    templates=st.booleans(),
)


@SETTINGS
@given(graph=graph_defs(), options=OPTIONS)
def test_random_graphdefs_build_and_keep_the_hierarchy_invariants(graph, options):
    slim = build_slim_graph(graph)
    h = build_hierarchy(slim, options)
    check_invariants(h)
    # every NodeDef is an op (duplicates too); each repeat of a name is reported
    assert slim.n_nodes == len(graph.node)
    assert len(slim.duplicate_names) == len(graph.node) - len({n.name for n in graph.node})
    # every main op has exactly one parent group; the root has none
    n = h.n_ops
    for i in range(n):
        if slim.embedding[i] == EmbeddingRole.MAIN:
            assert h.parent(i) is not None and h.is_group(h.parent(i))
    assert h.parent(h.root.name) is None
    # children lists partition the main ops and groups below the root
    placed = list(itertools.chain.from_iterable(g.children for g in h.groups))
    assert len(placed) == len(set(placed)) == sum(1 for r in slim.embedding if r == EmbeddingRole.MAIN) + len(h.groups) - 1
    # metaedge sizes add up to the base edge sizes
    assert sum(me.size for g in h.groups for me in g.metaedges) == sum(slim.edge_size)


#: Stock reference-edge ops ([TB-SRC] ``graph.ts``, docs/references.md): input 0 is a reference edge.
REFERENCE_OPS = {"Assign", "AssignAdd", "AssignSub", "assign", "assign_add", "assign_sub", "count_up_to",
                 "ScatterAdd", "ScatterSub", "ScatterUpdate", "scatter_add", "scatter_sub", "scatter_update"}


def _account_for_inputs(graph, slim):
    """Each GraphDef input, in op then input order, accounted for exactly once: the base edge it
    must make, a dangling input, or a drop with its documented reason (``graph/embeddings.py``).
    Returns (expected base edges, expected dangling, reason -> count)."""
    first = {}
    for i, node in enumerate(graph.node):
        first.setdefault(node.name, i)
    role, owner = slim.embedding, slim.owner

    def main_of(v):
        return v if role[v] == EmbeddingRole.MAIN else owner[v]

    base, dangling, reasons = [], [], {}

    def count(reason):
        reasons[reason] = reasons.get(reason, 0) + 1

    for d, node in enumerate(graph.node):
        for pos, text in enumerate(node.input):
            name = text.lstrip("^").split(":")[0]
            if name not in first:
                dangling.append((d, text))
                count("dangling")
                continue
            s = first[name]
            kind = EdgeKindCode.CONTROL if text.startswith("^") else (
                EdgeKindCode.REFERENCE if pos == 0 and node.op in REFERENCE_OPS else EdgeKindCode.DATA)
            if role[s] == EmbeddingRole.MAIN and role[d] == EmbeddingRole.MAIN:
                base.append((s, d, kind))
                count("base edge")
            elif role[s] == EmbeddingRole.IN_EMBEDDING:
                assert s in slim.in_embeddings[main_of(d)]
                count("in-embedding listed beside the op it feeds")
            elif role[d] == EmbeddingRole.OUT_EMBEDDING and role[s] == EmbeddingRole.MAIN and owner[d] == s:
                assert d in slim.out_embeddings[s]
                count("out-embedding listed beside its producer")
            elif role[s] == EmbeddingRole.OUT_EMBEDDING and role[d] != EmbeddingRole.MAIN:
                count("out-embedding into an embedding")
            elif main_of(s) == main_of(d):
                count("inside one op's embeddings")
            else:
                base.append((main_of(s), main_of(d), kind))
                count("re-targeted to the owners")
    return base, dangling, reasons


@SETTINGS
@given(graph=graph_defs(max_nodes=25))
def test_every_input_is_an_edge_or_dangling(graph):
    slim = build_slim_graph(graph)
    base, dangling, reasons = _account_for_inputs(graph, slim)
    assert sum(reasons.values()) == sum(len(node.input) for node in graph.node)
    assert list(zip(slim.edge_src, slim.edge_dst, slim.edge_kind)) == base
    assert [(x.node, x.input) for x in slim.dangling] == dangling
    # every input touching an embedding is kept beside the graph, whatever became of it
    touching = sum(n for r, n in reasons.items() if r not in ("base edge", "dangling"))
    assert len(slim.embedding_edges) == touching


@st.composite
def dags(draw):
    n = draw(st.integers(1, 30))
    nodes = [
        LayoutNode(f"n{i}", draw(st.sampled_from([0.0, 8.0, 30.0, 120.0])), draw(st.sampled_from([0.0, 10.0, 26.0])))
        for i in range(n)
    ]
    edges = []
    for _ in range(draw(st.integers(0, 2 * n))):
        a, b = sorted(draw(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))))
        if a != b:
            edges.append(LayoutEdge(f"n{a}", f"n{b}", kind=draw(st.sampled_from(["data", "control"]))))
    return LayoutGraph(nodes, edges)


def _assert_no_overlap(graph: LayoutGraph, result, eps: float = 1e-6):
    boxes = []
    for node in graph.nodes:
        x, y = result.positions[node.id]
        w, h = result.sizes[node.id]
        assert (w, h) == (node.width, node.height)
        box = (x - w / 2, y - h / 2, x + w / 2, y + h / 2)
        assert box[0] >= -eps and box[1] >= -eps
        assert box[2] <= result.width + eps and box[3] <= result.height + eps
        boxes.append((node.id, box))
    for (a, p), (b, q) in itertools.combinations(boxes, 2):
        if p[0] == p[2] or p[1] == p[3] or q[0] == q[2] or q[1] == q[3]:
            continue  # a zero-area box cannot overlap
        overlap = min(p[2], q[2]) - max(p[0], q[0]) > eps and min(p[3], q[3]) - max(p[1], q[1]) > eps
        assert not overlap, f"{a} {p} overlaps {b} {q}"
    assert len(result.edge_points) == len(graph.edges)


@settings(max_examples=100, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(graph=dags())
def test_fast_layout_of_random_dags_has_no_overlapping_boxes(graph):
    _assert_no_overlap(graph, layout(graph, LayoutOptions(engine=Engine.FAST)))


@settings(max_examples=25, deadline=10000, suppress_health_check=[HealthCheck.too_slow])
@given(graph=dags())
def test_dot_layout_of_random_dags_has_no_overlapping_boxes(graph):
    _assert_no_overlap(graph, layout(graph, LayoutOptions(engine=Engine.DOT)))


@settings(max_examples=60, deadline=3000, suppress_health_check=[HealthCheck.too_slow])
@given(graph=dags(), back=st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=5))
def test_fast_layout_with_cycles_and_self_loops_has_no_overlapping_boxes(graph, back):
    n = len(graph.nodes)
    extra = [LayoutEdge(f"n{b % n}", f"n{a % n}") for a, b in back]  # back edges and self loops
    cyclic = LayoutGraph(graph.nodes, graph.edges + tuple(extra))
    _assert_no_overlap(cyclic, layout(cyclic, LayoutOptions(engine=Engine.FAST)))
