"""Write a GraphDef as a run's graph: a ``graph_def`` event at a step (what ``add_graph`` writes).

``log`` is a logdir path or a ``torch.utils.tensorboard.SummaryWriter`` (its open event file,
then flushed). For a path, the event file is written here: TFRecord framing
(``tensorflow/core/lib/io/record_writer.cc``: ``uint64 length, uint32 masked_crc32c(length),
data, uint32 masked_crc32c(data)``), a ``brain.Event:2`` version record first, as TensorBoard's
own writer does, without its ``tf.io.gfile`` (which imports all of TensorFlow when installed).
"""

from __future__ import annotations

import os
import socket
import struct
import time
from typing import Any

from tensorboard.compat.proto import event_pb2, graph_pb2

from tb_graph_plugin.ingest.crc32c import masked_crc32c

__all__ = ["write_graph", "record"]


def record(data: bytes) -> bytes:
    """One TFRecord."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


def write_graph(log: Any, graph_def: graph_pb2.GraphDef, step: int = 0) -> None:
    now = time.time()
    event = event_pb2.Event(wall_time=now, step=int(step), graph_def=graph_def.SerializeToString())
    if isinstance(log, (str, os.PathLike)):
        logdir = os.fspath(log)
        os.makedirs(logdir, exist_ok=True)
        path = os.path.join(logdir, f"events.out.tfevents.{now:.6f}.{socket.gethostname()}.{os.getpid()}.tbgraph")
        version = event_pb2.Event(wall_time=now, file_version="brain.Event:2")
        with open(path, "wb") as f:
            f.write(record(version.SerializeToString()) + record(event.SerializeToString()))
        return
    file_writer = getattr(log, "_get_file_writer", None)
    if file_writer is None:
        raise TypeError(f"log must be a logdir path or a torch SummaryWriter, not {type(log).__name__}")
    file_writer().add_event(event)
    log.flush()
