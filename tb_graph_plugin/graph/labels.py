"""An op's label: the last part of its name, or its op type where the name was generated.

PyTorch graphs (op types with a namespace: ``aten::add``, ``prim::TupleConstruct``,
``onnx::Conv``) name ops by what the tracer or exporter made up, not by what the author wrote:
JIT value names (``816``, ``input.5``, ``x.1``) or the op type uniquified (``add``, ``add_3``,
``Conv_12``: ONNX exports, torch.export front ends). Such a name is never the label: the op type
is, without its namespace (``add``, ``TupleConstruct``, ``Conv``; an overload suffix such as
``.Tensor`` is dropped too). Rule, for an op whose type contains ``::``, on the last ``/`` part of
its name (``(x)``, the form ``graph/names.py`` gives an op that is also a scope, is read as ``x``):

- all digits (``816``), or ``<identifier>.<digits>`` (``input.5``, ``x.1``): generated;
- the short op type, or the short op type ``_<digits>``, compared ignoring case (``add``,
  ``add_3``, ``conv_12`` for ``onnx::Conv``): generated;
- anything else (``q_idx``, ``attention_mask``, ``weight``): the author's name, kept.

Ops without ``::`` in their type (TensorFlow, Keras) keep the last part of their name.

Pre: ``name`` is an op's name, ``op`` its op type. Post: the label is never empty unless the
name's last part is.

>>> op_label("GPT2Model/Block[h]/816", "aten::add"), op_label("m/input.5", "aten::linear")
('add', 'linear')
>>> op_label("m/blocks/add_3", "aten::add.Tensor"), op_label("m/q_idx", "aten::index")
('add', 'q_idx')
>>> op_label("dense/MatMul", "MatMul"), op_label("dense/816", "Identity")
('MatMul', '816')
"""

from __future__ import annotations

import re

__all__ = ["op_label", "short_op_type"]

_GENERATED = re.compile(r"[0-9]+|[A-Za-z_][A-Za-z0-9_]*\.[0-9]+")
_DIGITS = re.compile(r"[0-9]+")


def short_op_type(op: str) -> str:
    """``op`` without its namespace and overload: ``aten::add.Tensor`` -> ``add``; ``""`` when
    ``op`` has no ``::``.

    >>> short_op_type("onnx::Conv"), short_op_type("aten::add.Tensor"), short_op_type("MatMul")
    ('Conv', 'add', '')
    """
    j = op.find("::")
    if j < 0:
        return ""
    short = op[j + 2:]
    k = short.find(".")
    return short[:k] if k > 0 else short


def op_label(name: str, op: str) -> str:
    """The label drawn for the op ``name`` of type ``op`` (see the module doc)."""
    leaf = name[name.rfind("/") + 1:]
    if "::" not in op:
        return leaf
    short = short_op_type(op)
    if not short:
        return leaf
    bare = leaf[1:-1] if len(leaf) > 2 and leaf[0] == "(" and leaf[-1] == ")" else leaf
    if _GENERATED.fullmatch(bare):
        return short
    n = len(short)
    if bare[:n].lower() == short.lower() and (len(bare) == n or (bare[n] == "_" and _DIGITS.fullmatch(bare, n + 1))):
        return short
    return leaf
