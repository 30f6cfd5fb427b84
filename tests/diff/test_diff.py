"""``diff.diff_hierarchies`` on tiny hand-built graphs: each matching step and each changed field.

Post-conditions asserted (``diff/__init__``, ``diff/classify``): nodes matched by name first,
then a renamed scope by structure and relative names, a shifted ``_<n>`` suffix, an op swapped
in place; every field of a changed op; groups changed when anything under them is; ``same`` iff
nothing is listed; the root is never listed.
"""

from __future__ import annotations

from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.diff import diff_hierarchies
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy


def _h(nodes, edit=None):
    """A Hierarchy of ``(name, op, inputs)`` nodes; ``edit(graph_def)`` may change NodeDefs."""
    g = graph_pb2.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    if edit:
        edit(g)
    return build_hierarchy(build_slim_graph(g))


def _mlp(scope="dense", act="Relu"):
    return [
        ("x", "Placeholder", []),
        (f"{scope}/MatMul", "MatMul", ["x"]),
        (f"{scope}/BiasAdd", "BiasAdd", [f"{scope}/MatMul"]),
        (f"{scope}/{act}", act, [f"{scope}/BiasAdd"]),
        ("out", "Identity", [f"{scope}/{act}"]),
    ]


def _statuses(d):
    return {e.name: (e.status.value, e.fields, e.old_name) for e in d.entries}


def test_same_graph_lists_nothing():
    d = diff_hierarchies(_h(_mlp()), _h(_mlp()))
    assert d.same and d.entries == [] and (d.added, d.removed, d.changed) == ([], [], [])
    assert d.counts["ops"] == {"same": 5, "changed": 0, "added": 0, "removed": 0}
    assert d.matched["name"] == 5


def test_renamed_scope_matches_by_structure_and_relative_names():
    d = diff_hierarchies(_h(_mlp("encoder")), _h(_mlp("enc")))
    assert d.added == [] and d.removed == []
    s = _statuses(d)
    assert s["enc"] == ("changed", ["contents", "name"], "encoder")  # its ops are renamed too
    assert s["enc/MatMul"] == ("changed", ["name"], "encoder/MatMul")
    assert d.matched["scope"] == 3


def test_shifted_suffix_matches():
    a = _h([("x", "Placeholder", []), ("add_1", "AddV2", ["x", "x"]), ("y", "Identity", ["add_1"])])
    b = _h([("x", "Placeholder", []), ("add_2", "AddV2", ["x", "x"]), ("y", "Identity", ["add_2"])])
    d = diff_hierarchies(a, b)
    assert (d.added, d.removed, d.changed) == ([], [], ["add_2"])
    assert _statuses(d)["add_2"] == ("changed", ["name"], "add_1")
    assert d.matched["suffix"] == 1


def test_op_swapped_in_place_is_changed_and_added_layer_is_added():
    b_nodes = _mlp(act="Tanh")[:-1] + [("extra/MatMul", "MatMul", ["dense/Tanh"]),
                                       ("out", "Identity", ["extra/MatMul"])]
    d = diff_hierarchies(_h(_mlp()), _h(b_nodes))
    assert d.added == ["extra", "extra/MatMul"]
    assert d.removed == []
    assert d.changed == ["dense", "dense/Tanh", "out"]
    s = _statuses(d)
    assert s["dense/Tanh"] == ("changed", ["op", "name"], "dense/Relu")
    assert s["out"] == ("changed", ["inputs"], None)
    assert s["dense"] == ("changed", ["contents"], None)


def test_removed_op_is_anchored_at_its_group_partner():
    a = _h(_mlp() + [("dense/Check", "CheckNumerics", ["dense/MatMul"])])
    d = diff_hierarchies(a, _h(_mlp()))
    assert d.removed == ["dense/Check"] and d.changed == ["dense"]
    [entry] = [e for e in d.entries if e.status.value == "removed"]
    assert entry.anchor == "dense"


def test_attrs_device_and_shapes_are_fields():
    def edit(g):
        mm = g.node[1]
        mm.attr["transpose_a"].b = True
        mm.device = "/device:GPU:0"
        shape = g.node[2].attr["_output_shapes"].list.shape.add()
        shape.dim.add(size=4)

    d = diff_hierarchies(_h(_mlp()), _h(_mlp(), edit))
    s = _statuses(d)
    assert s["dense/MatMul"] == ("changed", ["attrs", "device"], None)
    assert s["dense/BiasAdd"] == ("changed", ["shapes"], None)  # _output_shapes: shapes, not attrs
    assert d.changed == ["dense", "dense/BiasAdd", "dense/MatMul"]


def test_unrelated_graphs_match_nothing():
    a = _h([("p", "Placeholder", []), ("s/q", "Relu", ["p"])])
    b = _h([("u", "Placeholder", []), ("t/v", "Tanh", ["u"])])
    d = diff_hierarchies(a, b)
    assert d.added == ["t", "t/v", "u"] and d.removed == ["p", "s", "s/q"] and d.changed == []
