"""Write hostile-but-real TensorBoard graph logs with the real TF APIs.

Each kind is one run directory under ``OUTDIR/<kind>/``, written by ``write_<kind>(run_dir)``:

``while_v1``       TF1 graph, control flow v1 ``tf.while_loop``: real cycles
                   (``Enter -> Merge -> Switch -> Identity -> NextIteration -> Merge``), written by
                   ``FileWriter.add_graph`` (run graph).
``while_trace``    TF2 ``tf.function`` with ``tf.while_loop`` traced by ``trace_on``/``trace_export``
                   (tag ``while_fn``): a functional ``While`` op with body/cond in the library.
``big_const``      TF1 graph with a 20 MB float32 ``Const`` (``big/value``) feeding ``big/sum``.
``xss``            TF1 graph whose string ``Const`` values, ``_xss`` attrs (set through
                   ``Graph._attr_scope``) and names (TF allows ``>`` and ``-`` and ``.``) carry XSS
                   payloads.
``xss_names``      a GraphDef whose node names, op names, device and attr strings are the
                   payloads (TF's Python API refuses such names, so the GraphDef is built with the
                   proto API, as a hostile upload would be) written by the real
                   ``tf.summary.graph`` (run graph).
``empty_trace``    ``trace_on(graph=True)`` then ``trace_export`` with no ``tf.function`` called:
                   the tag ``empty`` exists but its RunMetadata holds no function graph.

Run all kinds in one process: ``python -m tests.hostile.hostile_logs OUTDIR``. TF2 kinds run
first; the v1 kinds use their own ``tf.Graph`` and switch control flow v2 off at the very end.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["KINDS", "XSS_PAYLOADS", "BIG_CONST_ELEMENTS", "write_all"]

#: Payloads put wherever real TF lets them go (attr strings, Const values).
XSS_PAYLOADS = (
    "<img src=x onerror=top.__xss_ran=1;alert(1)>",
    "<script>top.__xss_ran=2;alert(2)</script>",
    "javascript:top.__xss_ran=3;alert(3)",
    '"><svg onload=top.__xss_ran=4;alert(4)>',
    "';top.__xss_ran=5;alert(5);//",
    "${top.__xss_ran=6}",
)
#: ``big/value`` of ``big_const``: 5,242,880 float32 = 20 MB of tensor content.
BIG_CONST_ELEMENTS = 5 * 1024 * 1024

KINDS = ("empty_trace", "while_trace", "xss_names", "while_v1", "big_const", "xss")  # empty_trace first: see write_empty_trace


def write_while_trace(run: Path) -> None:
    import tensorflow as tf

    @tf.function
    def while_fn(x):
        i = tf.constant(0)
        return tf.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 2.0), [i, x])

    writer = tf.summary.create_file_writer(str(run))
    tf.summary.trace_on(graph=True)
    while_fn(tf.constant([1.0, 2.0]))
    with writer.as_default():
        tf.summary.trace_export(name="while_fn", step=0)
    writer.close()


def write_empty_trace(run: Path) -> None:
    """Must run first in its process: after another trace in the same process, TF 2.21 records
    the eager ops of that trace's cleanup (``_EagerConst`` functions) into this one."""
    import tensorflow as tf

    @tf.function
    def f(x):
        return x + 1

    f(tf.constant(1.0))  # runs before trace_on: nothing runs between trace_on and export
    writer = tf.summary.create_file_writer(str(run))
    step = tf.constant(0, dtype=tf.int64)  # a python step would run _EagerConst inside the trace
    with writer.as_default():
        tf.summary.trace_on(graph=True)
        tf.summary.trace_export(name="empty", step=step)
    writer.close()


def _v1_write(run: Path, graph) -> None:
    import tensorflow as tf

    with graph.as_default():  # FileWriter refuses to run eagerly
        writer = tf.compat.v1.summary.FileWriter(str(run))
        writer.add_graph(graph)
        writer.close()


def write_while_v1(run: Path) -> None:
    import tensorflow as tf

    v1 = tf.compat.v1
    v1.disable_control_flow_v2()
    graph = tf.Graph()
    with graph.as_default():
        x = v1.placeholder(tf.float32, shape=[2], name="x")
        with tf.name_scope("loop"):
            v1.while_loop(lambda i, x: i < 5, lambda i, x: (i + 1, x * 2.0), [tf.constant(0), x])
    _v1_write(run, graph)


def write_big_const(run: Path) -> None:
    import numpy as np
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        with tf.name_scope("big"):
            value = tf.constant(np.arange(BIG_CONST_ELEMENTS, dtype=np.float32), name="value")
            tf.reduce_sum(value, name="sum")
    _v1_write(run, graph)


def write_xss(run: Path) -> None:
    import tensorflow as tf
    from tensorflow.core.framework import attr_value_pb2

    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.string, shape=[], name="x")
        for i, payload in enumerate(XSS_PAYLOADS):
            attr = attr_value_pb2.AttrValue(s=payload.encode())
            with graph._attr_scope({"_xss": attr}):  # a real attr, as tf.xla.experimental does
                c = tf.constant(payload, name=f"payload{i}")
                tf.identity(tf.strings.join([x, c]), name=f"a>b-{i}.svg")
    _v1_write(run, graph)


def xss_graph_def():
    """GraphDef (``tf.compat.v1.GraphDef``) with every payload as a node name, op, device, attr."""
    import tensorflow as tf

    graph = tf.compat.v1.GraphDef()
    previous = None
    for i, payload in enumerate(XSS_PAYLOADS):
        for name in (payload, f"scope{i}/{payload}"):
            node = graph.node.add(name=name, op=payload, device=payload)
            node.attr["_xss"].s = payload.encode()
            node.attr["_xss_list"].list.s.extend([payload.encode(), b"</textarea><b>x</b>"])
            if previous is not None:
                node.input.append(previous)
            previous = name
    return graph


def write_xss_names(run: Path) -> None:
    import tensorflow as tf

    writer = tf.summary.create_file_writer(str(run))
    with writer.as_default():
        tf.summary.graph(xss_graph_def())
    writer.close()


def write_all(outdir: Path, kinds=KINDS) -> None:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for kind in KINDS:  # fixed order: TF2 first, then control flow v1
        if kind in kinds:
            run = Path(outdir) / kind / kind
            run.mkdir(parents=True, exist_ok=True)
            globals()[f"write_{kind}"](run)


if __name__ == "__main__":
    write_all(Path(sys.argv[1]), sys.argv[2:] or KINDS)
