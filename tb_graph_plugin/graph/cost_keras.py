"""The parameters of a Keras layer from its config: the rules ``graph.cost`` applies to a Keras
conceptual graph's nodes (``ingest.keras_model`` keeps each layer's class and the config keys
``CONFIG_KEYS`` these read, with its build input shape, in attr ``_keras_config``).

Each rule is the weight shapes Keras 3 builds for that layer class (``keras/src/layers``), counted as
``model.count_params()`` counts them: trainable and not (a batch norm's moving mean and variance
included). A conceptual graph records no tensor shapes past each layer's input, so FLOPs and output
bytes stay unknown there.

>>> layer_params("Dense", {"units": 4, "use_bias": True, "input_shape": [None, 3]})
16
>>> layer_params("Conv2D", {"filters": 8, "kernel_size": [3, 3], "groups": 1, "use_bias": True,
...                         "data_format": "channels_last", "input_shape": [None, 16, 16, 3]})
224
"""

from __future__ import annotations

import math
from typing import Callable, Optional

from tb_graph_plugin.ingest.keras_model import CONFIG_KEYS

__all__ = ["CONFIG_KEYS", "KERAS_PARAMS", "layer_params"]

def _channels(c: dict) -> Optional[int]:
    shape = c.get("input_shape")
    if not shape:
        return None
    ch = shape[1] if c.get("data_format") == "channels_first" else shape[-1]
    return ch if isinstance(ch, int) else None


def _dense(c):
    cin = _channels(c)
    return None if cin is None else c["units"] * cin + (c["units"] if c.get("use_bias", True) else 0)


def _kernel(c) -> int:
    k = c.get("kernel_size", 1)
    return math.prod(k) if isinstance(k, list) else k


def _conv(c):
    cin = _channels(c)
    if cin is None:
        return None
    f = c["filters"]
    return _kernel(c) * cin // c.get("groups", 1) * f + (f if c.get("use_bias", True) else 0)


def _conv_transpose(c):
    cin = _channels(c)
    return None if cin is None else _kernel(c) * cin * c["filters"] + (c["filters"] if c.get("use_bias", True) else 0)


def _depthwise(c):
    cin = _channels(c)
    if cin is None:
        return None
    out = cin * c.get("depth_multiplier", 1)
    return _kernel(c) * out + (out if c.get("use_bias", True) else 0)


def _separable(c):
    cin = _channels(c)
    if cin is None:
        return None
    mid = cin * c.get("depth_multiplier", 1)
    return _kernel(c) * mid + mid * c["filters"] + (c["filters"] if c.get("use_bias", True) else 0)


def _norm_axis_size(c) -> Optional[int]:
    shape, axis = c.get("input_shape"), c.get("axis", -1)
    if not shape:
        return None
    axes = axis if isinstance(axis, list) else [axis]
    sizes = [shape[a] for a in axes]
    return math.prod(sizes) if all(isinstance(s, int) for s in sizes) else None


def _batch_norm(c):
    n = _norm_axis_size(c)
    return None if n is None else n * (2 + bool(c.get("center", True)) + bool(c.get("scale", True)))


def _layer_norm(c):
    n = _norm_axis_size(c)
    center = c.get("center", c.get("use_beta", True))
    scale = c.get("scale", c.get("use_gamma", True))
    return None if n is None else n * (bool(center) + bool(scale))


def _embedding(c):
    return c["input_dim"] * c["output_dim"]


def _mha(c):
    q = c.get("query_shape") or c.get("input_shape")
    v = c.get("value_shape") or q
    k = c.get("key_shape") or v
    if not q or not isinstance(q[-1], int):
        return None
    h, kd = c["num_heads"], c["key_dim"]
    vd = c.get("value_dim") or kd
    bias = c.get("use_bias", True)
    out = c.get("output_shape") or q[-1]
    out = math.prod(out) if isinstance(out, list) else out
    return (q[-1] * h * kd + k[-1] * h * kd + v[-1] * h * vd + h * vd * out
            + (bias and (2 * h * kd + h * vd + out)))


_NONE = """InputLayer ReLU Activation Dropout Flatten Reshape Add Subtract Multiply Average Maximum Minimum
Concatenate GlobalAveragePooling1D GlobalAveragePooling2D GlobalAveragePooling3D GlobalMaxPooling1D
GlobalMaxPooling2D MaxPooling1D MaxPooling2D MaxPooling3D AveragePooling1D AveragePooling2D AveragePooling3D
ZeroPadding1D ZeroPadding2D Rescaling Permute Softmax LeakyReLU ELU UpSampling1D UpSampling2D Cropping2D
Identity RepeatVector SpatialDropout2D GaussianNoise ActivityRegularization""".split()

KERAS_PARAMS: dict[str, Callable[[dict], Optional[int]]] = {
    "Dense": _dense, "Conv1D": _conv, "Conv2D": _conv, "Conv3D": _conv, "Conv1DTranspose": _conv_transpose,
    "Conv2DTranspose": _conv_transpose, "Conv3DTranspose": _conv_transpose, "DepthwiseConv2D": _depthwise,
    "DepthwiseConv1D": _depthwise, "SeparableConv2D": _separable, "SeparableConv1D": _separable,
    "BatchNormalization": _batch_norm, "LayerNormalization": _layer_norm, "Embedding": _embedding,
    "MultiHeadAttention": _mha, **{name: (lambda c: 0) for name in _NONE},
}


def layer_params(keras_class: str, config: dict) -> Optional[int]:
    """The parameters of a layer of class ``keras_class`` with ``config``; None when not known."""
    rule = KERAS_PARAMS.get(keras_class)
    if rule is None:
        return None
    try:
        return rule(config)
    except (KeyError, TypeError, IndexError):
        return None
