"""MLIR locations (``loc(...)``) as JAX writes them into StableHLO text, without jax or MLIR.

``jax.jit(f).lower(...).as_text(debug_info=True)`` gives each op a location alias
(``#locN = loc(...)``), read here (MLIR's location syntax, ``mlir/IR/BuiltinLocationAttributes``):

* ``"name"(child)``: a ``NameLoc``. JAX names an op by its name stack and primitive
  (``"jit(f)/jvp(Model)/Dense_0/dot_general"``) around its frames, and a frame by its function
  around a file location (``"Block.__call__"("model.py":12:4 to :30)``);
* ``"file":line:col``: a ``FileLineColLoc`` (or range);
* ``callsite(callee at caller)``: a call stack, innermost frame first;
* ``fused[...]``, ``#locN`` (an alias), ``unknown``.

``Locations.op_name`` is the op's ``NameLoc`` string (not a frame's); ``Locations.frame`` the
innermost frame, ``file:line in function``. Pre: alias bodies as written. Post: aliases of
aliases, self-references and nesting are bounded (64 steps); no file is ever opened.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

__all__ = ["Name", "File", "CallSite", "parse_loc", "Locations"]


@dataclasses.dataclass
class Name:
    name: str
    child: object


@dataclasses.dataclass
class File:
    file: str
    line: int


@dataclasses.dataclass
class CallSite:
    callee: object
    caller: object


def parse_loc(text: str):
    """A location body (inside ``loc(...)``) -> Name / File / CallSite / alias str / list / None."""
    text = text.strip()
    if not text or text == "unknown":
        return None
    if text.startswith("#loc"):
        return text.split()[0]
    if text.startswith("callsite("):
        inner = text[len("callsite("):-1]
        depth, k = 0, -1
        for i, c in enumerate(inner):
            depth += c == "("
            depth -= c == ")"
            if depth == 0 and inner.startswith(" at ", i):
                k = i
                break
        if k < 0:
            return None
        return CallSite(parse_loc(inner[:k]), parse_loc(inner[k + 4:]))
    if text.startswith("fused"):
        body = text[text.find("[") + 1:text.rfind("]")]
        return [parse_loc(p) for p in _split_top(body)]
    if text.startswith('"'):
        end = _string_end(text)
        value = text[1:end].replace('\\"', '"')
        rest = text[end + 1:].strip()
        if rest.startswith(":"):
            m = re.match(r":(\d+)", rest)
            return File(value, int(m.group(1)) if m else 0)
        if rest.startswith("(") and rest.endswith(")"):
            return Name(value, parse_loc(rest[1:-1]))
        return Name(value, None)
    return None


def _string_end(text: str) -> int:
    i = 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            return i
        i += 1
    return len(text) - 1


def _split_top(text: str) -> list[str]:
    parts, depth, start, quoted = [], 0, 0, False
    for i, c in enumerate(text):
        if c == '"' and (i == 0 or text[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted:
            depth += c in "([<{"
            depth -= c in ")]>}"
            if c == "," and depth == 0:
                parts.append(text[start:i])
                start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


class Locations:
    def __init__(self, aliases: dict):
        self.aliases = aliases
        self.parsed: dict = {}

    def get(self, loc):
        for _ in range(64):  # aliases of aliases
            if not isinstance(loc, str):
                return loc
            if loc not in self.parsed:
                self.parsed[loc] = parse_loc(self.aliases.get(loc, "unknown"))
            loc = self.parsed[loc]
        return None

    def op_name(self, loc, depth: int = 0) -> Optional[str]:
        loc = self.get(loc)
        if isinstance(loc, Name) and not isinstance(self.get(loc.child), File):
            return loc.name  # an op's name (a frame is a NameLoc around a file location)
        if isinstance(loc, list) and depth < 64:
            return next((n for n in (self.op_name(x, depth + 1) for x in loc) if n), None)
        return None

    def frame(self, loc, depth: int = 0) -> Optional[str]:
        """``file:line in fn`` of the innermost frame."""
        loc = self.get(loc)
        if depth > 64 or loc is None:
            return None
        if isinstance(loc, Name):
            child = self.get(loc.child)
            if isinstance(child, File):
                return f"{_short(child.file)}:{child.line} in {loc.name}"
            return self.frame(child, depth + 1)
        if isinstance(loc, CallSite):
            return self.frame(loc.callee, depth + 1) or self.frame(loc.caller, depth + 1)
        if isinstance(loc, File):
            return f"{_short(loc.file)}:{loc.line}"
        if isinstance(loc, list):
            return next((f for f in (self.frame(x, depth + 1) for x in loc) if f), None)
        return None


def _short(path: str) -> str:
    i = path.rfind("site-packages/")
    return path[i + len("site-packages/"):] if i >= 0 else path
