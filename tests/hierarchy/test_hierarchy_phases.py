"""SlimGraph -> Hierarchy post-conditions per phase, on tiny hand-built GraphDefs."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tensorboard.compat.proto import config_pb2, graph_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import HierarchyOptions, build_hierarchy, node_details
from tb_graph_plugin.hierarchy import templates
from tb_graph_plugin.hierarchy.infer_names import candidate_prefixes, shared_uniquifier
from tb_graph_plugin.hierarchy.profile import join_step_stats
from tb_graph_plugin.hierarchy.stats import histograms, top_placement
from tb_graph_plugin.ingest.local import load_graph_def_from_path
from tests.hierarchy.invariants import check_invariants


def _h(nodes, **opts):
    g = graph_pb2.GraphDef()
    for name, op, inputs in nodes:
        g.node.add(name=name, op=op, input=inputs)
    h = build_hierarchy(build_slim_graph(g), HierarchyOptions(**opts))
    check_invariants(h)
    return h


def _block(prefix, src):
    return [(f"{prefix}/mm", "MatMul", [src]), (f"{prefix}/add", "AddV2", [f"{prefix}/mm"]),
            (f"{prefix}/relu", "Relu", [f"{prefix}/add"])]


def test_scopes_and_metaedge_at_lowest_common_ancestor():
    h = _h([("x", "Placeholder", []), ("a/b/c", "Relu", ["x"]), ("a/b/d", "Relu", ["a/b/c"]),
            ("a/e", "Tanh", ["a/b/d", "^x"])])
    assert h.child_names("__root__") == ["x", "a"]
    assert h.child_names("a") == ["a/b", "a/e"]
    assert h.name_of(h.parent("a/b/c")) == "a/b"
    (inner,) = h.metaedges("a/b")
    assert (h.name_of(inner.src), h.name_of(inner.dst)) == ("a/b/c", "a/b/d")
    (mid,) = h.metaedges("a")
    assert (h.name_of(mid.src), h.name_of(mid.dst)) == ("a/b", "a/e")
    (top,) = h.metaedges("__root__")
    assert top.count == 2 and top.n_control == 1 and not top.control_only and top.kind == "data"
    a = h.group("a")
    assert (a.cardinality, a.depth, a.level) == (3, 2, 1)
    assert histograms(h, a.id).ops == {"Relu": 2, "Tanh": 1}


def _merged_histograms(h, gid):
    """The reference: each group's histograms merged bottom-up from its children, in order."""
    n = h.n_ops
    ops, devices, xla = {}, {}, {}
    for c in h.group(gid).children:
        if c < n:
            parts = ({h.slim.ops[c]: 1}, {h.slim.devices[c]: 1} if h.slim.devices[c] else {},
                     {h.slim.xla_clusters[c]: 1} if h.slim.xla_clusters[c] else {})
        else:
            parts = _merged_histograms(h, c)
        for into, part in zip((ops, devices, xla), parts):
            for k, v in part.items():
                into[k] = into.get(k, 0) + v
    return ops, devices, xla


def test_histograms_count_the_ops_below_in_children_order():
    """``stats.histograms`` (counted when a group is shown) equals the bottom-up merge of its
    children's, keys in the same order (ties of the info pane's sorted list keep it)."""
    g = graph_pb2.GraphDef()
    rows = [("b/x", "Relu", "/cpu:0", ""), ("a/y", "Tanh", "", "c1"), ("a/s/z", "Relu", "/gpu:0", "c1"),
            ("b/t/u", "MatMul", "/gpu:0", "c2"), ("b/w", "Tanh", "/cpu:0", "")]
    for name, op, device, cluster in rows:
        node = g.node.add(name=name, op=op, device=device)
        if cluster:
            node.attr["_XlaCluster"].s = cluster.encode()
    h = build_hierarchy(build_slim_graph(g))
    for gid in [h.root.id] + [x.id for x in h.groups[1:]]:
        got = histograms(h, gid)
        want = _merged_histograms(h, gid)
        assert [list(d.items()) for d in (got.ops, got.devices, got.xla)] == [list(d.items()) for d in want]
    assert list(histograms(h, h.root.id).ops.items()) == [("Relu", 2), ("MatMul", 1), ("Tanh", 2)]
    assert histograms(h, h.id_of("b")).devices == {"/cpu:0": 2, "/gpu:0": 1}


def test_top_placement_is_the_most_common_device_and_cluster_and_walks_nothing_without_them(monkeypatch):
    """What a drawn group shows: its ops' most common device and XLA cluster (a tie: the larger
    name). A graph whose ops have neither answers None without walking the group's ops."""
    g = graph_pb2.GraphDef()
    for name, device, cluster in [("b/x", "/cpu:0", ""), ("b/y", "/gpu:0", "c2"), ("b/z", "/gpu:0", "c1"),
                                  ("b/w", "/cpu:0", "c2"), ("b/v", "/gpu:0", "")]:
        node = g.node.add(name=name, op="Relu", device=device)
        if cluster:
            node.attr["_XlaCluster"].s = cluster.encode()
    h = build_hierarchy(build_slim_graph(g))
    assert top_placement(h, h.id_of("b")) == ("/gpu:0", "c2")
    bare = graph_pb2.GraphDef()
    for name in ("b/x", "b/y", "c"):
        bare.node.add(name=name, op="Relu")
    h = build_hierarchy(build_slim_graph(bare))
    monkeypatch.setattr(type(h), "leaf_ops", lambda *a: pytest.fail("walked the ops of a graph without devices"))
    assert top_placement(h, h.id_of("b")) == (None, None) and top_placement(h, h.root.id) == (None, None)


def test_histograms_of_a_real_model_equal_the_merge(real_logs):
    g = load_graph_def_from_path(str(real_logs.get("keras_resnet50_trace")))
    h = build_hierarchy(build_slim_graph(g))
    for x in h.groups:
        got = histograms(h, x.id)
        assert [list(d.items()) for d in (got.ops, got.devices, got.xla)] == \
            [list(d.items()) for d in _merged_histograms(h, x.id)]


def test_op_series_stock_rule_min_five_and_configurable():
    nodes = [("add", "Add", [])] + [(f"add_{k}", "Add", []) for k in range(1, 5)]
    h = _h(nodes)
    (s,) = h.series_nodes()
    assert s.label == "add_[0-4]" and s.indices == [0, 1, 2, 3, 4] and s.series_kind == "op"
    assert h.name_of(h.parent("add_3")) == s.name
    assert _h(nodes[:4]).series_nodes() == []  # 4 < 5
    assert len(_h(nodes[:4], series_min_size=3).series_nodes()) == 1


def test_block_series_and_templates_for_repeated_layers():
    nodes = [("x", "Placeholder", [])]
    src = "x"
    for k in range(6):
        nodes += _block(f"enc/Layer[{k}]", src)
        src = f"enc/Layer[{k}]/relu"
    nodes += [("enc/head/mm", "MatMul", [src])]
    h = _h(nodes)
    (s,) = h.series_nodes()
    assert s.label == "Layer[0-5]" and s.series_kind == "block"
    assert h.child_names(s.id) == [f"enc/Layer[{k}]" for k in range(6)]
    tids = {h.template_of(f"enc/Layer[{k}]") for k in range(6)}
    assert len(tids) == 1 and None not in tids
    # 5 metaedges chain the layers inside the series
    assert len(h.metaedges(s.id)) == 5
    off = _h(nodes, block_series_min_size=0)
    assert off.series_nodes() == [] and len(off.children("enc")) == 7


def test_ungrouped_series_keep_their_members_as_plain_children():
    # op series (stock rule) and block series, each ungrouped by its hierarchy name
    nodes = [("x", "Placeholder", [])]
    nodes += [("add", "Add", ["x"])] + [(f"add_{k}", "Add", ["x"]) for k in range(1, 5)]
    src = "x"
    for k in range(6):
        nodes += _block(f"enc/Layer[{k}]", src)
        src = f"enc/Layer[{k}]/relu"
    grouped = _h(nodes)
    assert sorted(s.name for s in grouped.series_nodes()) == ["add_[0-4]", "enc/Layer[0-5]"]

    h = _h(nodes, ungrouped_series=frozenset({"add_[0-4]"}))
    assert [s.name for s in h.series_nodes()] == ["enc/Layer[0-5]"]
    assert h.child_names("__root__") == ["x", "add", "add_1", "add_2", "add_3", "add_4", "enc"]
    assert h.series_of("add_2") is None and h.name_of(h.parent("add_2")) == "__root__"
    (me,) = [m for m in h.metaedges("__root__") if h.name_of(m.dst) == "add_3"]
    assert h.name_of(me.src) == "x" and me.count == 1

    h = _h(nodes, ungrouped_series=frozenset({"enc/Layer[0-5]"}))
    assert [s.name for s in h.series_nodes()] == ["add_[0-4]"]
    assert h.child_names("enc") == [f"enc/Layer[{k}]" for k in range(6)]
    assert not h.has("enc/Layer[0-5]")
    assert {h.template_of(f"enc/Layer[{k}]") for k in range(6)} == {h.template_of("enc/Layer[0]")}
    assert h.template_of("enc/Layer[0]") is not None  # still one shared template
    # the layer-to-layer metaedges are now the parent's, one per consecutive pair
    chain = sorted((h.name_of(m.src), h.name_of(m.dst)) for m in h.metaedges("enc"))
    assert chain == [(f"enc/Layer[{k}]", f"enc/Layer[{k + 1}]") for k in range(5)]

    both = _h(nodes, ungrouped_series=frozenset({"add_[0-4]", "enc/Layer[0-5]"}))
    assert both.series_nodes() == []
    assert _h(nodes, ungrouped_series=frozenset({"no/such[0-1]"})).series_nodes() != []


def test_templates_distinguish_structure_not_names():
    h = _h([("p/mm", "MatMul", []), ("p/relu", "Relu", ["p/mm"]),
            ("q/mm2", "MatMul", []), ("q/r", "Relu", ["q/mm2"]),
            ("z/relu", "Relu", []), ("z/mm", "MatMul", ["z/relu"])])
    assert h.template_of("p") == h.template_of("q") is not None
    assert h.template_of("z") is None  # same ops, reversed edge: different structure


def test_templates_of_big_metagraphs_numpy_path():
    # chains of 600 ops (>= BIG_METAGRAPH metaedges): q is p written in reverse GraphDef
    # order with other names, z differs in one op type in the middle
    def chain(prefix, ops, reverse=False):
        nodes = [(f"{prefix}/op{k}", op, [f"{prefix}/op{k - 1}"] if k else [])
                 for k, op in enumerate(ops)]
        return nodes[::-1] if reverse else nodes

    ops = ["MatMul" if k % 2 else "Relu" for k in range(600)]
    odd = list(ops)
    odd[300] = "Tanh"
    h = _h(chain("p", ops) + chain("q", ops, reverse=True) + chain("z", odd))
    assert len(h.metaedges("p")) == 599 >= templates.BIG_METAGRAPH
    assert h.template_of("p") == h.template_of("q") is not None
    assert h.template_of("z") is None


def test_candidate_prefixes_read_how_frameworks_write_indices():
    def prefixes(label):
        return [p for p, _ in candidate_prefixes(label)]

    assert prefixes("layer_3_attention") == ["layer_3"]
    assert prefixes("encoder_3_ffn_norm") == ["encoder_3"]
    assert prefixes("block_1_expand_BN") == ["block_1"]
    assert prefixes("block1a_dwconv") == ["block1", "block1a"]  # the stage, then the block
    assert prefixes("stage_0_block_2_conv") == ["stage_0", "stage_0_block_2"]
    assert prefixes("conv2_block1_2_bn") == ["conv2", "conv2_block1", "conv2_block1_2"]
    assert prefixes("mixed5") == ["mixed5"] and prefixes("mixed9_0") == ["mixed9", "mixed9_0"]
    assert prefixes("encoder.layer.3.attention.self") == ["encoder.layer.3"]
    assert prefixes("layers.3.mlp") == ["layers.3"] and prefixes("h.3.attn") == ["h.3"]
    assert prefixes("blocks.3.norm1") == ["blocks.3", "blocks.3.norm1"] and prefixes("Layer[3]_attn") == ["Layer[3]"]
    assert prefixes("dense") == [] and prefixes("Conv2D") == []
    # families: every index replaced, so stage_0_block_2 and stage_1_block_0 are one family
    assert candidate_prefixes("stage_1_block_0_x")[1][1] == candidate_prefixes("stage_0_block_2_x")[1][1]
    assert shared_uniquifier(["a_1", "b_1", "c_1", "d_2"]) == "_1"
    assert shared_uniquifier(["dense", "dense_1", "dense_2", "dense_3"]) == ""


def test_an_index_that_never_varies_is_not_an_index():
    # Keras default names: conv2d, conv2d_1, ... with their batch norms: no conv2 group,
    # no conv2d group (the family conv# has one member), no singleton conv2d_3 group
    nodes = [("m/x", "Placeholder", [])]
    src = "m/x"
    for k in range(8):
        suffix = f"_{k}" if k else ""
        nodes += [(f"m/conv2d{suffix}/op", "Conv2D", [src]),
                  (f"m/batch_normalization{suffix}/op", "FusedBatchNormV3", [f"m/conv2d{suffix}/op"])]
        src = f"m/batch_normalization{suffix}/op"
    h = _h(nodes)
    assert not any(g.inferred for g in h.groups)


def test_scope_inference_recovers_stage_and_block_levels():
    nodes = [("m/stem_conv_1/op", "Conv2D", [])]
    for stage, blocks in (("conv2", 3), ("conv3", 4)):
        for b in range(1, blocks + 1):
            for layer in ("1_conv", "1_bn", "2_conv", "out"):
                nodes.append((f"m/{stage}_block{b}_{layer}_1/op", "Relu", []))
    h = _h(nodes)
    assert h.child_names("m") == ["m/stem_conv_1", "m/conv2", "m/conv3"]
    assert h.group("m/conv2").inferred
    assert h.child_names("m/conv2") == ["m/conv2_block1", "m/conv2_block2", "m/conv2_block3"]
    assert h.child_names("m/conv2_block1")[0] == "m/conv2_block1_1"  # conv unit: 1_conv, 1_bn
    assert h.child_names("m/conv2_block1_1") == ["m/conv2_block1_1_conv_1", "m/conv2_block1_1_bn_1"]
    assert h.has("m/conv2_block1_1_conv_1/op")
    off = _h(nodes, infer_scopes=False, block_series_min_size=0)
    assert len(off.children("m")) == len(nodes) and not any(g.inferred for g in off.groups)
    small = _h(nodes[:5])  # auto mode needs many siblings
    assert not small.inferred_scopes


def test_profile_join_sums_per_group():
    h = _h([("a/x", "Relu", []), ("a/y", "Relu", ["a/x"]), ("b", "Tanh", ["a/y"])])
    rm = config_pb2.RunMetadata()
    dev = rm.step_stats.dev_stats.add(device="/cpu:0")
    for name, t, mem in (("a/x", 5, 100), ("a/y:0", 7, 0), ("b", 1, 8), ("gone", 3, 3)):
        ns = dev.node_stats.add(node_name=name, all_start_micros=10, all_end_rel_micros=t)
        ns.memory.add(total_bytes=mem)
    assert join_step_stats(h, rm) == 1
    assert h.group("a").compute_time_us == 12 and h.group("a").memory_bytes == 100
    assert h.root.compute_time_us == 13
    assert h.profile[h.id_of("b")]["device"] == "/cpu:0"


def test_node_details_fields_and_elided_attrs():
    from tb_graph_plugin import wire

    g = graph_pb2.GraphDef()
    g.node.add(name="w", op="Const")
    g.node[0].attr["value"].tensor.tensor_content = b"\0" * 4000
    g.node.add(name="x", op="Placeholder")
    g.node[1].attr["dtype"].type = 1
    g.node.add(name="s/m", op="MatMul", input=["x", "w"])
    h = build_hierarchy(build_slim_graph(g))
    d = node_details(h, "w")
    assert isinstance(d, wire.NodeDetails) and d.kind is wire.NodeKind.IN_EMBEDDING
    assert d.attrs[0].key == "value" and d.attrs[0].elided_bytes > 4000 and d.attrs[0].value is None
    m = node_details(h, "s/m")
    assert [(i.name, i.kind, i.visible) for i in m.inputs] == [("x", wire.EdgeKind.DATA, True),
                                                               ("w", wire.EdgeKind.DATA, False)]
    assert node_details(h, "x").attrs == [wire.NodeAttr(key="dtype", value="type: DT_FLOAT")]
    grp = node_details(h, "s")
    assert grp.kind is wire.NodeKind.META and grp.cardinality == 1
    assert grp.inputs == [wire.NodeIo(name="x", shape=None, kind=wire.EdgeKind.DATA, visible=True, count=1, size=1)]
    # the JSON leaves out what is None only where declared (OMIT_NONE): an elided attr has no value,
    # an op's inputs no count/size; every other field is written
    plain = json.loads(wire.to_json(d))
    assert plain["attrs"][0] == {"key": "value", "elided_bytes": d.attrs[0].elided_bytes}
    assert json.loads(wire.to_json(m))["inputs"][0] == {"name": "x", "shape": None, "kind": "data", "visible": True}
    assert list(plain) == [f.name for f in dataclasses.fields(wire.NodeDetails)
                           if not (f.metadata == wire.OMIT_NONE and getattr(d, f.name) is None)]  # cost: asked for
    assert json.loads(wire.to_json(grp))["inputs"][0] == {"name": "x", "shape": None, "kind": "data", "visible": True,
                                                          "count": 1, "size": 1}


def test_a_groups_op_histogram_counts_typed_ops_only():
    """A Keras conceptual graph's layers have no op type (their class is the ``keras_class`` attr):
    a group of them lists no ``op:`` attribute; typed ops beside them are counted."""
    g = graph_pb2.GraphDef()
    for name in ("model/dense", "model/dense_1", "model/relu"):
        g.node.add(name=name).attr["keras_class"].s = b"Dense"
    g.node.add(name="model/add", op="AddV2", input=["model/dense", "model/dense_1"])
    h = build_hierarchy(build_slim_graph(g))
    assert [(a.key, a.value) for a in node_details(h, "model").attrs] == [("op:AddV2", "1")]


def test_block_series_reads_keras_trace_scopes_as_layer_names():
    # a Keras 3 trace runs layer encoder_block in scope encoder_block_1, layer encoder_block_1
    # in encoder_block_1_2, layer encoder_block_2 in encoder_block_2_1, ...
    scopes = ["encoder_block_1", "encoder_block_1_2"] + [f"encoder_block_{k}_1" for k in range(2, 6)]
    nodes, src = [("m/embedding_1/op", "Gather", [])], "m/embedding_1/op"
    for scope in scopes:
        nodes += _block(f"m/{scope}", src)
        src = f"m/{scope}/relu"
    nodes += [("m/dense_1/op", "MatMul", [src])]
    h = _h(nodes)
    (s,) = h.series_nodes()
    assert s.label == "encoder_block_[0-5]"
    assert h.child_names(s.id) == [f"m/{scope}" for scope in scopes]  # members keep their names
