"""Write events for TensorBoard without TensorFlow: to a logdir path, or through a writer.

``log`` is a logdir path or a ``torch.utils.tensorboard.SummaryWriter`` (its open event file,
then flushed; any object with ``_get_file_writer().add_event``, or ``add_event`` itself, works
the same). For a path, the event file is written here: TFRecord framing
(``tensorflow/core/lib/io/record_writer.cc``: ``uint64 length, uint32 masked_crc32c(length),
data, uint32 masked_crc32c(data)``), a ``brain.Event:2`` version record first, as TensorBoard's
own writer does, without its ``tf.io.gfile`` (which imports all of TensorFlow when installed).

A path keeps one event file per logdir and process, appended to and flushed on each write (one
file for a whole training run, as TensorBoard's writers do, not one per step).
"""

from __future__ import annotations

import os
import socket
import struct
import threading
import time
from typing import Any, Iterable

from tensorboard.compat.proto import event_pb2, graph_pb2

from tb_graph_plugin.ingest.crc32c import masked_crc32c

__all__ = ["write_graph", "write_events", "record"]

_FILES: dict[str, str] = {}  # logdir -> this process's event file in it
_LOCK = threading.Lock()


def record(data: bytes) -> bytes:
    """One TFRecord."""
    header = struct.pack("<Q", len(data))
    return header + struct.pack("<I", masked_crc32c(header)) + data + struct.pack("<I", masked_crc32c(data))


def write_events(log: Any, events: Iterable[event_pb2.Event]) -> None:
    """Append ``events`` to ``log`` (a logdir path or a writer, see the module docstring)."""
    events = list(events)
    if isinstance(log, (str, os.PathLike)):
        logdir = os.path.abspath(os.fspath(log))
        with _LOCK:
            path = _FILES.get(logdir)
            if path is None or not os.path.exists(path):
                os.makedirs(logdir, exist_ok=True)
                now = time.time()
                path = os.path.join(logdir, f"events.out.tfevents.{now:.6f}.{socket.gethostname()}.{os.getpid()}.tbgraph")
                with open(path, "wb") as f:
                    f.write(record(event_pb2.Event(wall_time=now, file_version="brain.Event:2").SerializeToString()))
                _FILES[logdir] = path
            with open(path, "ab") as f:
                f.write(b"".join(record(e.SerializeToString()) for e in events))
        return
    file_writer = getattr(log, "_get_file_writer", None)
    add_event = file_writer().add_event if file_writer is not None else getattr(log, "add_event", None)
    if add_event is None:
        raise TypeError(f"log must be a logdir path or a torch SummaryWriter, not {type(log).__name__}")
    for event in events:
        add_event(event)
    flush = getattr(log, "flush", None)
    if flush is not None:
        flush()


def write_graph(log: Any, graph_def: graph_pb2.GraphDef, step: int = 0) -> None:
    """A GraphDef as the run's graph: a ``graph_def`` event at ``step`` (what ``add_graph`` writes)."""
    event = event_pb2.Event(wall_time=time.time(), step=int(step), graph_def=graph_def.SerializeToString())
    write_events(log, [event])
