"""Names shared by the plugin: our plugin name, and the data names TensorBoard writers use.

The data names are those of TensorBoard's built-in Graphs plugin
(``tensorboard/plugins/graph/metadata.py``); we read the same data.
"""

PLUGIN_NAME = "graph_explorer"
TAB_NAME = "Graph Explorer"

# Data plugin names written by the graph writers ([TB-SRC] ``plugins/graph/metadata.py``, docs/references.md).
RUN_GRAPH = "graphs"  # Event.graph_def: TF1 FileWriter.add_graph, PyTorch add_graph
RUN_GRAPH_TAG = "__run_graph__"
RUN_METADATA = "graph_run_metadata"  # trace_export with profiler: graph + step stats
RUN_METADATA_WITH_GRAPH = "graph_run_metadata_graph"  # trace_export(graph=True)
KERAS_MODEL = "graph_keras_model"  # model.to_json()
TAGGED_RUN_METADATA = "graph_tagged_run_metadata"  # Event.tagged_run_metadata: step stats only

DATA_PLUGIN_NAMES = (
    RUN_GRAPH,
    RUN_METADATA,
    RUN_METADATA_WITH_GRAPH,
    KERAS_MODEL,
    TAGGED_RUN_METADATA,
)

# The plugin content that versioned writers put in the summary metadata.
CONTENT_VERSION_1 = b"1"

# The pseudo-run under which uploaded graphs are listed.
UPLOAD_RUN = "__upload__"

# Per-node data (``tb_graph_plugin.summary.node_data``): a tensor summary of this sub-plugin,
# one string tensor per step holding the JSON of ``ingest.node_data`` (names and values).
NODE_DATA = "graph_explorer_node_data"

# What torch.compile made of a run graph's call (``tb_graph_plugin.torch.add_compiled_graph``): a
# tensor summary of this sub-plugin, tag ``torch_compile`` (not ``__run_graph__``: a tag keeps the
# metadata it was first written with, the run graph's), one string tensor per step holding the
# JSON of ``wire.CompileFacts`` (``summary.compile_facts_event``; the listing reads it).
COMPILE_FACTS = "graph_explorer_compile"
COMPILE_FACTS_TAG = "torch_compile"

# The pseudo-run of the built-in cost colour modes (``/node_data`` with ``data_run=__cost__``): each
# tag is a ``wire.NodeCost`` field, the value of every op computed from the graph (``hierarchy.cost``).
COST_RUN = "__cost__"
COST_TAGS = ("params", "flops", "output_bytes")

