"""A BERT-like TensorFlow graph in the style of the original BERT code (``modeling.py``:
``attention_layer`` with ``tf.matmul(q, k, transpose_b=True)``, a scale, an additive mask, a
softmax), written as a GraphDef with shapes (``add_shapes=True``), in a process of its own:

    python -m tests.graph.tf_bert_like OUT.pb LAYERS     # also OUT.pb.json: its variables' elements

For the pattern tests (``(MatMul|BatchMatMulV2) -> * -> Softmax``: one match per layer) and the
TF cost rules on a real graph.
"""

from __future__ import annotations

import sys

SEQ, WIDTH, HEADS, FF = 16, 64, 4, 256


def build(layers: int):
    import tensorflow as tf

    tf1 = tf.compat.v1
    g = tf.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [2, SEQ, WIDTH], name="input")
        mask = tf1.placeholder(tf.float32, [2, 1, SEQ, SEQ], name="mask")
        h = x
        head = WIDTH // HEADS

        def dense(t, units, name):
            with tf1.variable_scope(name):
                w = tf1.get_variable("kernel", [t.shape[-1], units])
                b = tf1.get_variable("bias", [units], initializer=tf1.zeros_initializer())
                flat = tf.reshape(t, [-1, t.shape[-1]])
                return tf.reshape(tf.nn.bias_add(tf.matmul(flat, w), b), [2, SEQ, units])

        def heads(t):
            return tf.transpose(tf.reshape(t, [2, SEQ, HEADS, head]), [0, 2, 1, 3])

        for i in range(layers):
            with tf1.variable_scope(f"layer_{i}"):
                with tf1.variable_scope("attention"):
                    q, k, v = (heads(dense(h, WIDTH, n)) for n in ("query", "key", "value"))
                    scores = tf.matmul(q, k, transpose_b=True) * (1.0 / head ** 0.5)
                    scores += (1.0 - mask) * -10000.0
                    probs = tf.nn.softmax(scores)
                    ctx = tf.reshape(tf.transpose(tf.matmul(probs, v), [0, 2, 1, 3]), [2, SEQ, WIDTH])
                    h = h + dense(ctx, WIDTH, "output")
                f = tf.nn.gelu(dense(h, FF, "intermediate"))
                h = h + dense(f, WIDTH, "output")
        tf.identity(h, name="encoded")
    return g


if __name__ == "__main__":
    out, layers = sys.argv[1], int(sys.argv[2])
    import json
    import math

    g = build(layers)
    with open(out, "wb") as f:
        f.write(g.as_graph_def(add_shapes=True).SerializeToString())
    with g.as_default():
        import tensorflow as tf

        params = sum(math.prod(v.shape) for v in tf.compat.v1.global_variables())
    with open(out + ".json", "w") as f:
        json.dump({"params": params, "layers": layers}, f)
