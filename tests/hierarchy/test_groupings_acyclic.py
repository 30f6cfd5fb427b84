"""Post-condition of every grouping phase (inferred scopes, dataflow regions, op and block
series): on an acyclic op graph, no metagraph has a cycle and every series is a chain or
unconnected. Random DAGs whose op names mix the index forms frameworks write, with every
phase switched on and its size thresholds at their smallest."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy
from tb_graph_plugin.hierarchy.dataflow import (Contraction, graph_from_metaedges, is_acyclic, series_shape,
                                              strong_components)
from tests.hierarchy.invariants import check_invariants
from tests.hierarchy.random_dags import draw_dag

_PATTERNS = [
    lambda a, b: f"layer_{a}_{('attention', 'norm', 'ffn')[b % 3]}",
    lambda a, b: "Add" if b == 0 else f"Add_{b}",
    lambda a, b: f"block{a}{'abc'[b % 3]}_conv",
    lambda a, b: f"conv{a}_block{b}_{a + b}_bn",
    lambda a, b: f"stage_{a}_block_{b}_relu",
    lambda a, b: f"mixed{a}" if b == 0 else f"mixed{a}_{b}",
    lambda a, b: f"h.{a}.mlp",
    lambda a, b: f"op{a}x{b}",
]

_OPTIONS = HierarchyOptions(infer_scopes=True, infer_min_siblings=2, series_min_size=2,
                            block_series_min_size=2, region_min_children=4, region_min_size=2)


@st.composite
def named_dags(draw):
    n = draw(st.integers(4, 40))
    names: list[str] = []
    bases: set[str] = set()
    plain = draw(st.booleans())  # names that carry no block: only dataflow regions and op series
    for k in range(n):
        p = draw(st.integers(0, len(_PATTERNS) - 1))
        base = "m/" + (f"n{k}" if plain else _PATTERNS[p](draw(st.integers(0, 3)), draw(st.integers(0, 5))))
        if base in bases:
            continue  # one op or one layer scope per name: '/' scopes stay convex (pre-condition)
        bases.add(base)
        layer = not plain or draw(st.booleans())  # patterned names are layer scopes holding an op
        names.append(base + "/op" if layer else base)
    edges = []
    reach = draw(st.sampled_from([3, 5, 1000]))  # local edges make modules with separators
    for j in range(1, len(names)):
        for i in draw(st.lists(st.integers(max(0, j - reach), j - 1), min_size=1, max_size=3, unique=True)):
            edges.append((i, j))  # only forward: the op graph is a DAG
    ops = [draw(st.sampled_from(["AddV2", "MatMul", "Relu"])) for _ in names]
    return names, edges, ops


@settings(max_examples=200, deadline=None)
@given(named_dags())
def test_no_grouping_invents_a_cycle(dag):
    names, edges, ops = dag
    g = graph_pb2.GraphDef()
    for k, (name, op) in enumerate(zip(names, ops)):
        g.node.add(name=name, op=op, input=[names[i] for i, j in edges if j == k])
    h = build_hierarchy(build_slim_graph(g), _OPTIONS)
    check_invariants(h)
    for group in h.groups:
        assert is_acyclic(graph_from_metaedges(h, group.id)), (group.name, names, edges)
        if group.is_series:
            inside = graph_from_metaedges(h, group.id)
            assert series_shape(inside, list(range(len(group.children)))) is not None, group.name


def test_contraction_refuses_a_block_a_path_leaves_and_reenters():
    succ = [{1}, {2}, set()]  # 0 -> 1 -> 2
    assert not Contraction(succ).try_add([0, 2])  # 1 lies between them
    c = Contraction([{2}, set(), set(), {1}])  # a1=0 -> b1=2 and b2=3 -> a2=1
    assert c.try_add([0, 1])  # alone, A = {a1, a2} is convex
    assert not c.try_add([2, 3])  # but with B = {b1, b2}: A -> B -> A


def test_series_shape_chain_unconnected_or_neither():
    assert series_shape([{1}, {2}, set()], [0, 1, 2]) == "chain"
    assert series_shape([set(), set(), set()], [0, 1, 2]) == "unconnected"
    assert series_shape([{2}, set(), set()], [0, 1, 2]) == "forward"  # 0 feeds 2, not 1
    assert series_shape([set(), {0}, set()], [0, 1, 2]) is None  # backwards


def test_strong_components_and_contraction_on_one_existing_cycle():
    # t <-> a, t <-> b (a and b each read from and feed t: gradient sums), c outside the cycle
    succ = [{1, 2}, {0, 3}, {0}, set()]
    comp = strong_components(succ)
    assert comp[0] == comp[1] == comp[2] != comp[3]
    c = Contraction(succ)
    assert c.on_one_cycle([1, 2]) and c.try_add([1, 2])
    assert not Contraction(succ).try_add([2, 3])  # 2 -> t -> a -> 3 leaves and comes back
    acyclic = [{1}, {2}, set()]
    assert not Contraction(acyclic).on_one_cycle([0, 2])


def test_regression_gradient_sums_on_the_tape_cycle_form_a_forward_series():
    # A training step's root: every AddN reads gradients from gradient_tape and feeds it back
    # (a cycle TensorFlow wrote), some AddN feed later ones. Contracting them adds no cycle.
    nodes = [("x", "Placeholder", [])]
    for k in range(6):
        name = "AddN" if k == 0 else f"AddN_{k}"
        inputs = [f"gradient_tape/g{k}"] + ([f"AddN_{k - 1}" if k > 1 else "AddN"] if k % 2 else [])
        nodes += [(f"gradient_tape/g{k}", "Mul", ["x"] + ([f"{name}"] if k else [])), (name, "AddN", inputs)]
    nodes += [("gradient_tape/out", "Identity", ["AddN_5"])]
    h = _graph(nodes)
    (addn,) = [s for s in h.series_nodes() if s.label.startswith("AddN")]
    assert addn.label == "AddN_[0-5]" and addn.parent == h.root.id
    check_invariants(h)


def _graph(nodes):
    g = graph_pb2.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    return build_hierarchy(build_slim_graph(g))


def test_regression_addn_run_that_is_not_a_chain_is_no_series():
    # stock rule: AddN, AddN_1 .. AddN_5 form a series; here each feeds the next through a
    # Relu outside the run, so contracting them would draw a reversed edge
    nodes, src = [("x", "Placeholder", [])], "x"
    for k in range(6):
        name = "AddN" if k == 0 else f"AddN_{k}"
        nodes += [(name, "AddN", [src, "x"]), (f"act{k}", "Relu", [name])]
        src = f"act{k}"
    h = _graph(nodes)
    assert not [s for s in h.series_nodes() if s.label.startswith("AddN")]
    unconnected = _graph([("x", "Placeholder", [])] + [(f"AddN_{k}", "AddN", ["x"]) for k in range(1, 7)])
    assert [s.label for s in unconnected.series_nodes()] == ["AddN_[1-6]"]


def test_regression_roles_across_layers_are_no_block_series():
    # attention and ffn blocks of 4 layers: the attentions are not a chain (each reaches the
    # next only through its layer's ffn), so no attn_[0-3] series; the layers themselves are
    nodes, src = [("x", "Placeholder", [])], "x"
    for k in range(4):
        nodes += [(f"enc/attn_{k}/mm", "MatMul", [src]), (f"enc/attn_{k}/sm", "Softmax", [f"enc/attn_{k}/mm"]),
                  (f"enc/ffn_{k}/mm", "MatMul", [f"enc/attn_{k}/sm"]), (f"enc/ffn_{k}/act", "Relu", [f"enc/ffn_{k}/mm"])]
        src = f"enc/ffn_{k}/act"
    h = _graph(nodes)
    assert not h.series_nodes()
    assert all(is_acyclic(graph_from_metaedges(h, g.id)) for g in h.groups)


def test_regression_glue_inside_a_stage_goes_into_the_block_it_sits_in():
    # conv2_x (a layer of stage conv2, of no block) lies between conv2_block1_a and _b: the
    # block takes it in, or the block would be no convex part of the stage
    nodes, src = [("m/x", "Placeholder", [])], "m/x"
    for stage in (2, 3, 4):
        for block in (1, 2):
            p = f"m/conv{stage}_block{block}"
            nodes += [(f"{p}_a/op", "Conv2D", [src])]
            mid = f"{p}_a/op"
            if (stage, block) == (2, 1):
                nodes += [("m/conv2_x/op", "Relu", [mid])]
                mid = "m/conv2_x/op"
            nodes += [(f"{p}_b/op", "Relu", [mid])]
            src = f"{p}_b/op"
    nodes += [(f"m/head{k}/op", "Relu", [src]) for k in range(2)]
    h = _graph(nodes)
    assert h.name_of(h.parent("m/conv2_x")) == "m/conv2_block1"
    assert all(is_acyclic(graph_from_metaedges(h, g.id)) for g in h.groups)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_contraction_bounded_by_rank_decides_as_the_full_search(data):
    succ = draw_dag(data)
    n = len(succ)
    free = list(range(n))
    proposals = []
    while len(free) >= 2 and len(proposals) < 6:
        size = data.draw(st.integers(2, min(5, len(free))))
        block = data.draw(st.lists(st.sampled_from(free), min_size=size, max_size=size, unique=True))
        proposals.append(block)
        free = [k for k in free if k not in block]
    bounded, full = Contraction(succ), Contraction(succ, rank=[])  # rank=[]: no bound
    for block in proposals:
        assert bounded.try_add(block) == full.try_add(block), (succ, proposals)
