"""A Python value as a NodeDef ``AttrValue``: what the torch and JAX front ends
(``exported_program``, ``jax_program``) write of an op's arguments, so that the info pane shows
them and the cost rules read them (``graph/cost_rules.py``).

Pre: ``attr`` an empty ``AttrValue``. Post: a bool, int (clamped to int64), float or str (cut at
1024 characters) set as such; a list of ints (not bools) as ``list.i``; any other value depends on
``lists``: True (torch.export's JSON arguments) writes a list of bools, of numbers or else of texts
as ``list.b`` / ``list.f`` / ``list.s`` (each text cut at 256) and leaves a dict or None unset;
False (JAX's primitive params: tuples of tuples, named tuples, dtypes) writes the value's text as
``s`` (``dimension_numbers`` as ``jax.lax`` writes it, which the cost rules parse).
"""

from __future__ import annotations

from tensorboard.compat.proto import attr_value_pb2

__all__ = ["set_attr"]

_INT64 = (-2**63, 2**63 - 1)


def _int64(v: int) -> int:
    return max(min(v, _INT64[1]), _INT64[0])


def set_attr(attr: attr_value_pb2.AttrValue, value, *, lists: bool) -> None:
    """Set ``value`` into ``attr`` (module docstring)."""
    if isinstance(value, bool):
        attr.b = value
    elif isinstance(value, int):
        attr.i = _int64(value)
    elif isinstance(value, float):
        attr.f = value
    elif isinstance(value, str):
        attr.s = value[:1024].encode()
    elif (isinstance(value, (list, tuple)) and (value or lists)
          and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        attr.list.i.extend(_int64(v) for v in value)
    elif not lists:
        attr.s = str(value)[:1024].encode()
    elif isinstance(value, list):
        if all(isinstance(v, bool) for v in value):
            attr.list.b.extend(value)
        elif all(isinstance(v, (int, float)) for v in value):
            attr.list.f.extend(float(v) for v in value)
        else:
            attr.list.s.extend(str(v)[:256].encode() for v in value)
