"""The pretty form of MLIR as JAX prints StableHLO, read line by line (no MLIR, no jax).

What ``ingest/stablehlo.py`` needs of the text: ``func.func`` bodies (``split_funcs``: regions
counted on lines whose strings are blanked), an op line's results (``%18:20`` is ``%18#0``..),
operation name, operands, attribute text, result types and trailing location (``parse_line``),
``tensor<2x?x16xf32>`` types (``tensor_types``: ``(dims, element type)``, -1 for ``?``), and
JAX's pytree paths in argument locations and ``jax.result_info`` (``pytree_path``).

Pre: JAX's printed text (``as_text(debug_info=True)``); generic-form ops (``"stablehlo.case"(...)``)
are read too. Post: pure functions of the text; nothing is evaluated.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from tensorboard import errors

from tb_graph_plugin.ingest.mlir_locations import parse_loc

__all__ = ["Line", "Func", "results", "parse_line", "tensor_types", "result_types", "operands", "attributes",
           "pytree_path", "closing_loc", "split_funcs", "strip_strings", "LOC_ALIAS", "VALUE", "TRAILING_LOC",
           "RESULT_INFO", "ITER_ARG"]

LOC_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_FUNC = re.compile(r"^\s*func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)\((.*)\)\s*(?:->\s*(.*?))?\s*(?:attributes\s*\{.*\})?\s*\{\s*$")
_OP = re.compile(r'^\s*(?:(%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s*)?("?[a-z_]+\.[\w.]+"?|return|call)\b(.*)$')
VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
TRAILING_LOC = re.compile(r"\s*loc\(((?:[^()]|\([^()]*\))*)\)\s*$")
_TENSOR = re.compile(r"tensor<([^<>]*(?:<[^<>]*>)?[^<>]*)>")
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*([^,()\s{]*(?:<[^<>]*>)?)\s*(?:\{[^{}]*\})?\s*(?:loc\(((?:[^()]|\([^()]*\))*)\))?")
RESULT_INFO = re.compile(r'jax\.result_info\s*=\s*"([^"]*)"')
ITER_ARG = re.compile(r"(%[\w.$-]+)\s*=\s*(%[\w.$-]+(?:#\d+)?)")
_PATH_PART = re.compile(r"\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]|\[\s*(-?\d+)\s*\]|\.(\w+)")


@dataclasses.dataclass
class Line:
    results: list  # result value names (``%18#0``.. for ``%18:20``)
    op: str  # "stablehlo.add", "func.call", "return"
    rest: str  # the text after the op name, without its trailing loc
    loc: object  # parsed trailing location
    opens: bool  # the line ends with "{"


@dataclasses.dataclass
class Func:
    name: str
    args: list  # [(value name, type text, loc body)]
    results: str  # result types text (with jax.result_info)
    body: list  # [raw lines]


def results(text: Optional[str]) -> list[str]:
    if not text:
        return []
    out = []
    for part in text.split(","):
        part = part.strip()
        if ":" in part:
            name, count = part.split(":")
            out += [f"{name}#{k}" for k in range(int(count))]
        else:
            out.append(part)
    return out


def parse_line(line: str) -> Optional[Line]:
    body = line.rstrip()
    opens = body.endswith("{")
    loc = None
    m = TRAILING_LOC.search(body)
    if m:
        loc = parse_loc(m.group(1))
        body = body[:m.start()]
    m = _OP.match(body)
    if not m:
        return None
    return Line(results(m.group(1)), m.group(2).strip('"'), m.group(3), loc, opens)


def tensor_types(text: str) -> list[tuple]:
    """(dims, element type) of each ``tensor<...>`` in ``text``."""
    out = []
    for body in _TENSOR.findall(text):
        body = body.split(",")[0].strip()  # an encoding after the element type
        parts = body.split("x")
        dims = []
        for p in parts[:-1]:
            dims.append(int(p) if p.isdigit() else -1)
        out.append((tuple(dims), parts[-1].strip()))
    return out


def result_types(rest: str, n: int) -> list[tuple]:
    if "->" in rest:
        types = tensor_types(rest[rest.rfind("->"):])
    elif " : " in rest:
        types = tensor_types(rest[rest.rfind(" : "):])[-1:] * max(n, 1)
    else:
        types = []
    return (types + [(None, None)] * n)[:n]


def operands(rest: str) -> list[str]:
    head = rest.split(" : ")[0] if " : " in rest else rest
    head = re.sub(r"\{[^{}]*\}", "", head)
    return VALUE.findall(head)


def attributes(rest: str) -> str:
    head = rest.split(" : ")[0] if " : " in rest else rest
    text = VALUE.sub("", head).strip(" ,()")
    return re.sub(r"\s+", " ", text)[:200]


def pytree_path(text: Optional[str]) -> tuple:
    """``p['params']['block_0'][0].value`` -> ("p", "params", "block_0", "0").

    >>> pytree_path("params['attn']['value'].value"), pytree_path("model.blocks[1].up.kernel.value")
    (('params', 'attn', 'value'), ('model', 'blocks', '1', 'up', 'kernel'))
    """
    if not text:
        return ()
    m = re.match(r"\s*([A-Za-z_]\w*)", text)
    head = (m.group(1),) if m else ()
    parts = []
    for mm in _PATH_PART.finditer(text[m.end() if m else 0:]):
        if mm.group(4) in ("value", "raw_value"):
            continue  # an NNX Variable's value (``.value``), not a key (``['value']``)
        parts.append(next(g for g in mm.groups() if g is not None))
    return head + tuple(parts)


def closing_loc(lines: list, start: int, depth: int):
    """The location on the line closing the region op whose first line is before ``start``
    (``depth`` regions already open on it): a region op's location follows its regions."""
    opened = depth > 0
    for raw in lines[start:]:
        blanked = strip_strings(raw) if "{" in raw or "}" in raw else raw
        depth += blanked.count("{") - blanked.count("}")
        opened = opened or depth > 0
        if opened and depth <= 0:
            m = TRAILING_LOC.search(raw.rstrip())
            return parse_loc(m.group(1)) if m else None
    return None


def split_funcs(lines: list[str], what: str) -> dict:
    """name -> Func; regions are counted on the lines with their strings blanked (a brace in
    a location or an attribute string nests nothing), the bodies keep the lines as written."""
    funcs: dict = {}
    current = None
    depth = 0
    for raw in lines:
        if current is None:
            m = _FUNC.match(raw)
            if m:
                current = Func(m.group(1), [], m.group(3) or "", [])
                current.args = [(a.group(1), a.group(2), a.group(3)) for a in _ARG.finditer(m.group(2))]
                depth = 1
            continue
        blanked = strip_strings(raw) if "{" in raw or "}" in raw else raw
        depth += blanked.count("{") - blanked.count("}")
        if depth <= 0:
            funcs[current.name] = current
            current = None
            continue
        current.body.append(raw)
    if current is not None:
        raise errors.InvalidArgumentError(f"{what}: func.func @{current.name} is not closed")
    return funcs


def strip_strings(line: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
