"""Summaries for Graph Explorer, written without TensorFlow: ``node_data`` (a value per node per step).

``node_data(log, tag, values, step)`` writes a TensorBoard tensor summary of the plugin
``graph_explorer_node_data`` (``metadata.NODE_DATA``; data class TENSOR, so both the Python
multiplexer and the Rust data server of ``--load_fast=true`` keep it): ``values`` maps node or
group names of the graph to numbers (NaN and infinities allowed). Graph Explorer colours the
graph by it, aggregates it to groups (max, mean or sum) and steps through it (``/node_data``).

``log`` is a logdir path (an event file of this process in it, appended to) or a
``torch.utils.tensorboard.SummaryWriter`` (its own event file): see ``event_writer``.
TensorBoard keeps 10 steps per tag of this plugin unless told
``--samples_per_plugin=graph_explorer_node_data=1000`` (the steps to keep; 0 keeps all under the Python multiplexer).

Example::

    from tb_graph_plugin.summary import node_data
    for step in range(100):
        ...
        node_data("logs/run1", "grad_norm", {"dense/MatMul": 0.3, "dense_1/MatMul": 1.2}, step)
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Optional

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2

from tb_graph_plugin import metadata
from tb_graph_plugin.ingest.node_data import encode
from tb_graph_plugin.summary.event_writer import write_events

__all__ = ["compile_facts_event", "node_data", "node_data_event"]


def node_data_event(tag: str, values: Mapping[str, Any], step: int, *, thresholds: Optional[list] = None,
                    gradient: Optional[list] = None, wall_time: Optional[float] = None) -> event_pb2.Event:
    """The event ``node_data`` writes (for writers of one's own)."""
    if not isinstance(tag, str) or not tag:
        raise ValueError("node_data needs a tag (a non-empty string)")
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=metadata.NODE_DATA, content=b'{"version":1}'),
        data_class=summary_pb2.DATA_CLASS_TENSOR,
        summary_description="Graph Explorer node data: a value per node of the graph",
    )
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, tensor_shape=tensor_shape_pb2.TensorShapeProto(),
                                    string_val=[encode(values, thresholds, gradient)])
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, metadata=meta, tensor=tensor)])
    return event_pb2.Event(wall_time=time.time() if wall_time is None else wall_time, step=int(step), summary=summary)


def compile_facts_event(facts: Mapping[str, int], step: int, *, wall_time: Optional[float] = None) -> event_pb2.Event:
    """The event ``tb_graph_plugin.torch.add_compiled_graph`` writes beside its run graph: the
    counts of ``wire.CompileFacts`` (``graphs``, ``graph_breaks``, ``recompilations``, ``kernels``)
    as a JSON string tensor of plugin ``metadata.COMPILE_FACTS``, tag ``metadata.COMPILE_FACTS_TAG``; the
    listing (``/graphs``) gives them with the step."""
    import json

    body = json.dumps({k: int(facts[k]) for k in ("graphs", "graph_breaks", "recompilations", "kernels")})
    meta = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name=metadata.COMPILE_FACTS, content=b'{"version":1}'),
        data_class=summary_pb2.DATA_CLASS_TENSOR,
        summary_description="Graph Explorer: what torch.compile made of the run graph's call",
    )
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, tensor_shape=tensor_shape_pb2.TensorShapeProto(),
                                    string_val=[body.encode()])
    value = summary_pb2.Summary.Value(tag=metadata.COMPILE_FACTS_TAG, metadata=meta, tensor=tensor)
    return event_pb2.Event(wall_time=time.time() if wall_time is None else wall_time, step=int(step),
                           summary=summary_pb2.Summary(value=[value]))


def node_data(log: Any, tag: str, values: Mapping[str, Any], step: int = 0, *,
              thresholds: Optional[list] = None, gradient: Optional[list] = None) -> None:
    """Write ``values`` (node or group name -> number) as node data ``tag`` at ``step`` to ``log``.

    ``thresholds`` / ``gradient``: colour settings in Model Explorer's form
    (``[{"value": 10, "bgColor": "#00ff00"}, ...]`` / ``[{"stop": 0, "bgColor": "#fff"}, ...]``),
    used as the tag's default colours.
    """
    write_events(log, [node_data_event(tag, values, step, thresholds=thresholds, gradient=gradient)])
