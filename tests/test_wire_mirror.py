"""``frontend/src/api/types.ts`` mirrors ``tb_graph_plugin/wire.py`` field for field, type for type.

Every dataclass of ``wire.__all__`` must have a TypeScript interface of the same name with the
same fields in the same order, each of the TypeScript type its Python annotation maps to:

==============================  =============================================================
Python                          TypeScript
==============================  =============================================================
``str`` / ``int``, ``float``    ``string`` / ``number``
``bool`` / ``Any``              ``boolean`` / ``unknown``
``Optional[T]``                 ``T | null``; with ``metadata=wire.OMIT_NONE``: ``field?: T``
``list[T]`` / ``dict[str, T]``  ``T[]`` / ``Record<string, T>``
a ``str`` enum, a ``Literal``   its name, declared ``export type Name = "a" | "b"`` with the same
                                values in the same order
a wire dataclass                its name (checked as an interface of its own)
==============================  =============================================================

The ``IntEnum``s (``EdgeKindCode``, ``EmbeddingRole``) are column codes, never sent: not mirrored.
``test_the_mirror_check_catches_*`` feed the checker deliberately wrong sources, so it is known
to fail when the mirror is wrong.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import typing
from pathlib import Path
from typing import Any, Union

import pytest

from tb_graph_plugin import wire

TYPES_TS = Path(__file__).resolve().parent.parent / "frontend" / "src" / "api" / "types.ts"

WIRE_DATACLASSES = [getattr(wire, n) for n in wire.__all__ if dataclasses.is_dataclass(getattr(wire, n))]
WIRE_STR_ENUMS = [getattr(wire, n) for n in wire.__all__
                  if isinstance(getattr(wire, n), type) and issubclass(getattr(wire, n), str)
                  and issubclass(getattr(wire, n), enum.Enum)]
WIRE_LITERALS = {n: getattr(wire, n) for n in wire.__all__ if typing.get_origin(getattr(wire, n)) is typing.Literal}

_SCALARS = {str: "string", int: "number", float: "number", bool: "boolean", Any: "unknown"}


# -- the TypeScript side ---------------------------------------------------------------------


def _strip_comments(source: str) -> str:
    return re.sub(r"//[^\n]*", "", source)


def ts_interface(source: str, name: str) -> list[tuple[str, bool, str]]:
    """``(field, optional, type)`` of ``export interface name``, in order; type without spaces."""
    m = re.search(r"export interface %s \{(.*?)\n\}" % name, _strip_comments(source), re.S)
    assert m, f"interface {name} missing from types.ts"
    return [(f, q == "?", re.sub(r"\s+", "", t))
            for f, q, t in re.findall(r"^\s*(\w+)(\??):\s*([^;]+);", m.group(1), re.M)]


def ts_string_union(source: str, name: str) -> list[str]:
    """The values of ``export type name = "a" | "b";``, in order."""
    m = re.search(r"export type %s = ([^;]+);" % name, _strip_comments(source))
    assert m, f"type {name} missing from types.ts"
    parts = [p.strip() for p in m.group(1).split("|")]
    assert all(re.fullmatch(r'"[^"]*"', p) for p in parts), f"type {name} is not a union of strings: {m.group(1)}"
    return [p[1:-1] for p in parts]


def _union_members(ts_type: str) -> frozenset:
    """Members of a top-level union (``|`` outside ``<>`` / ``()``), so their order does not matter."""
    members, depth, cur = [], 0, ""
    for ch in ts_type:
        depth += ch in "<("
        depth -= ch in ">)"
        if ch == "|" and depth == 0:
            members.append(cur)
            cur = ""
        else:
            cur += ch
    return frozenset(members + [cur])


# -- the Python side -------------------------------------------------------------------------


def ts_type_of(annotation) -> str:
    """The TypeScript type (without spaces) a wire annotation maps to (see the module doc)."""
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation.__name__
    if dataclasses.is_dataclass(annotation):
        return annotation.__name__
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        names = [n for n, lit in WIRE_LITERALS.items() if lit == annotation]
        assert names, f"{annotation} is not a named Literal of wire.__all__"
        return names[0]
    if origin is Union:
        inner = [a for a in args if a is not type(None)]
        assert len(inner) == 1 and len(args) == 2, f"only Optional[T] unions are mirrored, got {annotation}"
        return f"{ts_type_of(inner[0])}|null"
    if origin is list:
        item = ts_type_of(args[0])
        return f"({item})[]" if "|" in item else f"{item}[]"
    if origin is dict:
        assert args[0] is str, f"JSON object keys are strings, got {annotation}"
        return f"Record<string,{ts_type_of(args[1])}>"
    raise AssertionError(f"no TypeScript mirror for {annotation!r}")


def expected_fields(cls) -> list[tuple[str, bool, str]]:
    """``(field, optional, type)`` the interface of ``cls`` must have."""
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        annotation = hints[f.name]
        if f.metadata.get("omit_none"):  # left out of the JSON when None: optional, never null
            inner = [a for a in typing.get_args(annotation) if a is not type(None)]
            assert typing.get_origin(annotation) is Union and len(inner) == 1, f"{cls.__name__}.{f.name}: OMIT_NONE needs Optional"
            out.append((f.name, True, ts_type_of(inner[0])))
        else:
            out.append((f.name, False, ts_type_of(annotation)))
    return out


def mirror_mismatches(source: str, cls) -> list[str]:
    """What differs between ``cls`` and its interface in ``source``; empty when it mirrors."""
    want, got = expected_fields(cls), ts_interface(source, cls.__name__)
    if [w[0] for w in want] != [g[0] for g in got]:
        return [f"{cls.__name__}: fields {[g[0] for g in got]} != {[w[0] for w in want]}"]
    return [f"{cls.__name__}.{name}: types.ts has {name}{'?' if go else ''}: {gt}, wire.py means "
            f"{name}{'?' if wo else ''}: {wt}"
            for (name, wo, wt), (_, go, gt) in zip(want, got)
            if wo != go or _union_members(wt) != _union_members(gt)]


# -- the tests -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def source() -> str:
    return TYPES_TS.read_text(encoding="utf-8")


@pytest.mark.parametrize("cls", WIRE_DATACLASSES, ids=lambda c: c.__name__)
def test_types_ts_mirrors_wire_field_for_field_and_type_for_type(source, cls):
    assert mirror_mismatches(source, cls) == []


@pytest.mark.parametrize("enum_cls", WIRE_STR_ENUMS, ids=lambda c: c.__name__)
def test_types_ts_mirrors_wire_enums(source, enum_cls):
    assert ts_string_union(source, enum_cls.__name__) == [e.value for e in enum_cls]


@pytest.mark.parametrize("name", sorted(WIRE_LITERALS))
def test_types_ts_mirrors_wire_literals(source, name):
    assert ts_string_union(source, name) == list(typing.get_args(WIRE_LITERALS[name]))


def test_types_ts_has_the_same_wire_version(source):
    assert re.search(r"export const WIRE_VERSION = (\d+);", source).group(1) == str(wire.WIRE_VERSION)


def test_every_answer_and_kind_is_mirrored():
    """The lists above are read off ``wire.__all__``: the answers and kinds the issue names are in them."""
    names = {c.__name__ for c in WIRE_DATACLASSES} | {e.__name__ for e in WIRE_STR_ENUMS}
    assert {"Scene", "SceneDelta", "NodeDetails", "NodeAttr", "NodeIo", "SearchHit", "SearchAnswer",
            "GraphDiff", "UploadAnswer", "ErrorAnswer", "Job", "Listing", "NodeKind", "EdgeKind"} <= names
    assert "Inferred" in WIRE_LITERALS


# -- the check itself can fail ---------------------------------------------------------------


def _tampered(source: str, interface: str, old: str, new: str) -> str:
    start = source.index(f"export interface {interface} {{")
    end = source.index("\n}", start)
    body = source[start:end]
    assert old in body, (interface, old)
    return source[:start] + body.replace(old, new, 1) + source[end:]


@pytest.mark.parametrize(
    "interface,old,new",
    [
        ("SceneNode", "x: number;", "x: string;"),  # scalar type
        ("SceneNode", "parent: string | null;", "parent: string;"),  # Optional without null
        ("SceneNode", "expanded: boolean;", "expanded?: boolean;"),  # required made optional
        ("SceneEdge", "points: number[][];", "points: number[];"),  # list depth
        ("SceneEdge", "kind: EdgeKind;", "kind: NodeKind;"),  # enum by name
        ("Scene", "nodes: SceneNode[];", "nodes: SceneEdge[];"),  # nested dataclass by name
        ("NodeAttr", "value?: string;", "value: string | null;"),  # OMIT_NONE field made required
        ("NodeIo", "count?: number;", "count?: string;"),
        ("NodeDetails", "inferred: Inferred;", "inferred: string;"),  # Literal by name
        ("GraphDiff", "counts: Record<string, Record<string, number>>;", "counts: Record<string, number>;"),
    ],
)
def test_the_mirror_check_catches_a_wrong_type(source, interface, old, new):
    cls = getattr(wire, interface)
    assert mirror_mismatches(source, cls) == []
    assert mirror_mismatches(_tampered(source, interface, old, new), cls) != []


def test_the_mirror_check_catches_wrong_enum_values(source):
    wrong = source.replace('export type EdgeKind = "data" | "control" | "reference";',
                           'export type EdgeKind = "data" | "control";')
    assert wrong != source
    assert ts_string_union(wrong, "EdgeKind") != [e.value for e in wire.EdgeKind]
