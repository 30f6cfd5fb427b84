"""StableHLO text (``.mlir``) -> ``jax_program.JaxProgram`` -> GraphDef, without jax.

Reads what ``jax.jit(f).lower(*args).as_text(debug_info=True)`` writes (MLIR's pretty form of the
``func`` / ``stablehlo`` / ``chlo`` dialects, with locations): the same naming as a jaxpr read by
``tb_graph_plugin.jax`` (``ingest/jax_program.py``), because each op's location holds the name
stack JAX lowered it with:

* ``#locN = loc("jit(step)/transpose(jvp(Model))/block_0/Dense_0/dot_general"(#locM))``: a
  ``NameLoc`` whose last component is the primitive; the top-level ``jit(<fn>)`` is dropped and
  the rest is a name stack (``ingest/jax_scopes.py``). ``callsite(callee at caller)`` chains of
  ``"fn"("file":line:col)`` give the source (``file:line in fn``, the innermost frame); the
  server never opens a file named in the text;
* ``@main``'s arguments are named by their ``loc("p['params']['block_0']['Dense_0']['kernel']")``
  (pytree paths: parameters under ``params`` become ``jax::parameter`` ops) and its results by
  ``jax.result_info``;
* ``func.call @f`` is inlined at each call (its ops' names are relative to the call's; a call
  named ``jit(<name>)`` is a group); a region's ops are named within their function
  (``.../while/body/add``, ``.../cond/branch_1_fun/mul``), and the ``stablehlo.while`` /
  ``stablehlo.case`` itself is one op reading its regions' results, in a group named as its
  location (``while``, ``cond``); the bodies of other region ops (a ``reduce``'s reducer, a ``scatter``'s update,
  a ``sort``'s comparator) belong to their op and are not drawn;
* op types ``stablehlo::<op>`` (``chlo.square`` is ``stablehlo::square``, ``_target`` keeps the
  dialect), a ``constant`` drawn beside its consumer; output shapes and element types from the
  result types; the attribute text (``contracting_dims = [1] x [0]``) as ``attributes``.

JAX lowers ``scan`` to ``while``, so a scan body reads ``while/body`` here, not ``scan ×N``.

Pre: ``blob`` the file's bytes. Post: a GraphDef, or ``InvalidArgumentError`` saying why not
(not UTF-8, no ``func.func @main``, an op reading a value never defined, over ``max_ops`` ops).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.ingest import jax_program, jax_scopes
from tb_graph_plugin.ingest.jax_program import JaxInput, JaxOp, JaxProgram
from tb_graph_plugin.ingest.too_large import GraphTooLarge

__all__ = ["looks_like_stablehlo", "read_stablehlo", "stablehlo_to_graph_def", "parse_stablehlo"]

_LOC_ALIAS = re.compile(r"^(#loc\d*)\s*=\s*loc\((.*)\)\s*$")
_FUNC = re.compile(r"^\s*func\.func\s+(?:public\s+|private\s+)?@([\w.$-]+)\((.*)\)\s*(?:->\s*(.*?))?\s*(?:attributes\s*\{.*\})?\s*\{\s*$")
_OP = re.compile(r'^\s*(?:(%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+(?::\d+)?)*)\s*=\s*)?("?[a-z_]+\.[\w.]+"?|return|call)\b(.*)$')
_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_TRAILING_LOC = re.compile(r"\s*loc\(((?:[^()]|\([^()]*\))*)\)\s*$")
_TENSOR = re.compile(r"tensor<([^<>]*(?:<[^<>]*>)?[^<>]*)>")
_ARG = re.compile(r"(%[\w.$-]+)\s*:\s*([^,()\s{]*(?:<[^<>]*>)?)\s*(?:\{[^{}]*\})?\s*(?:loc\(((?:[^()]|\([^()]*\))*)\))?")
_RESULT_INFO = re.compile(r'jax\.result_info\s*=\s*"([^"]*)"')
_ITER_ARG = re.compile(r"(%[\w.$-]+)\s*=\s*(%[\w.$-]+(?:#\d+)?)")
_PATH_PART = re.compile(r"\[\s*'([^']*)'\s*\]|\[\s*\"([^\"]*)\"\s*\]|\[\s*(-?\d+)\s*\]|\.(\w+)")
_CALLS_HIDDEN = ("closed_call", "core_call", "jit", "remat", "checkpoint", "pjit")


def looks_like_stablehlo(blob, filename: Optional[str] = None) -> bool:
    """A ``.mlir`` file name, or text opening with an MLIR ``module`` / ``#loc`` line."""
    if filename and filename.lower().endswith(".mlir"):
        return True
    head = bytes(blob[:4096]).lstrip()
    return head.startswith((b"module @", b"module {", b"#loc")) and b"func.func" in bytes(blob[:1 << 20])


def read_stablehlo(blob, what: str, max_ops: Optional[int] = None) -> tuple[graph_pb2.GraphDef, str]:
    """``(GraphDef, source)``, the ``parse.GRAPH_FILE_FORMATS`` reader."""
    return stablehlo_to_graph_def(blob, what, max_ops), "StableHLO text (.mlir)"


def stablehlo_to_graph_def(blob, what: str, max_ops: Optional[int] = None) -> graph_pb2.GraphDef:
    try:
        text = bytes(blob).decode("utf-8")
    except UnicodeDecodeError as e:
        raise errors.InvalidArgumentError(f"{what} is not StableHLO text: not UTF-8 ({e.reason} at byte {e.start})") from None
    try:
        program = parse_stablehlo(text, what, max_ops)
        graph = jax_program.program_to_graph_def(program)
    except (errors.PublicError, GraphTooLarge):
        raise
    except (RecursionError, ValueError, IndexError, KeyError, TypeError, AttributeError) as e:
        raise errors.InvalidArgumentError(
            f"{what} is not StableHLO text this reader understands ({type(e).__name__}: {str(e)[:200]})") from None
    if not graph.node:
        raise errors.InvalidArgumentError(f"{what}: its func.func @main holds no ops")
    return graph


# ---------------------------------------------------------------- locations

@dataclasses.dataclass
class _Name:
    name: str
    child: object


@dataclasses.dataclass
class _File:
    file: str
    line: int


@dataclasses.dataclass
class _CallSite:
    callee: object
    caller: object


def _parse_loc(text: str):
    """A location body (inside ``loc(...)``) -> _Name / _File / _CallSite / alias str / list / None."""
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
        return _CallSite(_parse_loc(inner[:k]), _parse_loc(inner[k + 4:]))
    if text.startswith("fused"):
        body = text[text.find("[") + 1:text.rfind("]")]
        return [_parse_loc(p) for p in _split_top(body)]
    if text.startswith('"'):
        end = _string_end(text)
        value = text[1:end].replace('\\"', '"')
        rest = text[end + 1:].strip()
        if rest.startswith(":"):
            m = re.match(r":(\d+)", rest)
            return _File(value, int(m.group(1)) if m else 0)
        if rest.startswith("(") and rest.endswith(")"):
            return _Name(value, _parse_loc(rest[1:-1]))
        return _Name(value, None)
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


class _Locations:
    def __init__(self, aliases: dict):
        self.aliases = aliases
        self.parsed: dict = {}

    def get(self, loc):
        for _ in range(64):  # aliases of aliases
            if not isinstance(loc, str):
                return loc
            if loc not in self.parsed:
                self.parsed[loc] = _parse_loc(self.aliases.get(loc, "unknown"))
            loc = self.parsed[loc]
        return None

    def op_name(self, loc, depth: int = 0) -> Optional[str]:
        loc = self.get(loc)
        if isinstance(loc, _Name) and not isinstance(self.get(loc.child), _File):
            return loc.name  # an op's name (a frame is a NameLoc around a file location)
        if isinstance(loc, list) and depth < 64:
            return next((n for n in (self.op_name(x, depth + 1) for x in loc) if n), None)
        return None

    def frame(self, loc, depth: int = 0) -> Optional[str]:
        """``file:line in fn`` of the innermost frame."""
        loc = self.get(loc)
        if depth > 64 or loc is None:
            return None
        if isinstance(loc, _Name):
            child = self.get(loc.child)
            if isinstance(child, _File):
                return f"{_short(child.file)}:{child.line} in {loc.name}"
            return self.frame(child, depth + 1)
        if isinstance(loc, _CallSite):
            return self.frame(loc.callee, depth + 1) or self.frame(loc.caller, depth + 1)
        if isinstance(loc, _File):
            return f"{_short(loc.file)}:{loc.line}"
        if isinstance(loc, list):
            return next((f for f in (self.frame(x, depth + 1) for x in loc) if f), None)
        return None


def _short(path: str) -> str:
    i = path.rfind("site-packages/")
    return path[i + len("site-packages/"):] if i >= 0 else path


# ---------------------------------------------------------------- functions and ops

@dataclasses.dataclass
class _Line:
    results: list  # result value names (``%18#0``.. for ``%18:20``)
    op: str  # "stablehlo.add", "func.call", "return"
    rest: str  # the text after the op name, without its trailing loc
    loc: object  # parsed trailing location
    opens: bool  # the line ends with "{"


@dataclasses.dataclass
class _Func:
    name: str
    args: list  # [(value name, type text, loc body)]
    results: str  # result types text (with jax.result_info)
    body: list  # [raw lines]


def _results(text: Optional[str]) -> list[str]:
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


def _parse_line(line: str) -> Optional[_Line]:
    body = line.rstrip()
    opens = body.endswith("{")
    loc = None
    m = _TRAILING_LOC.search(body)
    if m:
        loc = _parse_loc(m.group(1))
        body = body[:m.start()]
    m = _OP.match(body)
    if not m:
        return None
    return _Line(_results(m.group(1)), m.group(2).strip('"'), m.group(3), loc, opens)


def _tensor_types(text: str) -> list[tuple]:
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


def _result_types(rest: str, n: int) -> list[tuple]:
    if "->" in rest:
        types = _tensor_types(rest[rest.rfind("->"):])
    elif " : " in rest:
        types = _tensor_types(rest[rest.rfind(" : "):])[-1:] * max(n, 1)
    else:
        types = []
    return (types + [(None, None)] * n)[:n]


def _operands(rest: str) -> list[str]:
    head = rest.split(" : ")[0] if " : " in rest else rest
    head = re.sub(r"\{[^{}]*\}", "", head)
    return _VALUE.findall(head)


def _attributes(rest: str) -> str:
    head = rest.split(" : ")[0] if " : " in rest else rest
    text = _VALUE.sub("", head).strip(" ,()")
    return re.sub(r"\s+", " ", text)[:200]


def _path(text: Optional[str]) -> tuple:
    """``p['params']['block_0'][0].value`` -> ("p", "params", "block_0", "0").

    >>> _path("params['attn']['value'].value"), _path("model.blocks[1].up.kernel.value")
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


def _input_role(path: tuple) -> tuple[tuple, str]:
    arg, rest = (path[0], path[1:]) if path else ("input", ())
    if rest[:1] == ("params",):
        return rest, "param"
    if arg == "params":
        return ("params",) + rest, "param"
    return (arg,) + rest, "input"


class _Reader:
    def __init__(self, funcs: dict, locs: _Locations, what: str, max_ops: Optional[int]):
        self.funcs, self.locs, self.what, self.max_ops = funcs, locs, what, max_ops
        self.ops: list[JaxOp] = []
        self.count = 0
        self.depth = 0

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def scope_of(self, line: _Line, prefix: list, top: bool) -> tuple[list, Optional[str]]:
        """(scope segments, last name component) of an op at this location."""
        name = self.locs.op_name(line.loc) or ""
        parts = [p for p in name.split("/") if p]
        if top and parts and parts[0].startswith("jit(") and parts[0].endswith(")"):
            parts = parts[1:]  # the lowered function itself
        last = parts.pop() if parts else None
        return prefix + ([("stack", "/".join(parts))] if parts else []), last

    def run(self, func: _Func, env: dict, prefix: list, top: bool) -> list:
        """Read ``func``'s body with ``env`` (its argument values); the values it returns."""
        self.depth += 1
        if self.depth > 64:
            raise errors.InvalidArgumentError(f"{self.what}: func.call nests more than 64 deep (recursion?)")
        lines = func.body
        returned: list = []
        stack: list = []  # open region frames: dict(kind, scope, reads, env, op line)
        i = 0
        while i < len(lines):
            raw = lines[i]
            i += 1
            stripped = raw.strip()
            if not stripped:
                continue
            if stripped.startswith("}"):
                if not stack:
                    continue
                frame = stack[-1]
                if stripped.startswith("} do {") or stripped.startswith("}, {"):
                    frame["region"] += 1
                    frame["label"] = ("body" if frame["kind"] == "while" else f"branch_{frame['region']}")
                    continue
                stack.pop()
                self.close(frame, stripped, env, prefix, top)
                continue
            hidden = any(f["kind"] == "hidden" for f in stack)
            if stripped in ("cond {",) and stack and stack[-1]["kind"] == "while":
                continue
            line = _parse_line(raw)
            if line is None:
                if stripped.endswith("{"):
                    stack.append({"kind": "hidden", "region": 0, "label": None, "line": None, "reads": []})
                continue
            if hidden:
                if line.opens:
                    stack.append({"kind": "hidden", "region": 0, "label": None, "line": None, "reads": []})
                continue
            inner_prefix = self.region_prefix(stack, prefix)
            if line.op in ("return", "func.return", "stablehlo.return"):
                values = [env.get(v) for v in _operands(line.rest)]
                if stack:
                    stack[-1]["reads"].extend(v for v in values if v)
                else:
                    returned = values
                continue
            if line.op == "stablehlo.while":
                for name, value in _ITER_ARG.findall(line.rest):
                    env[name] = env.get(value)
                line.loc = _closing_loc(lines, i, 0) or line.loc
                scope, last = self.scope_of(line, inner_prefix, top)
                stack.append({"kind": "while", "region": 0, "label": "cond", "line": line, "reads": [],
                              "scope": scope + [("group", last or "while")]})
                continue
            if line.op == "stablehlo.case" and line.opens:
                line.loc = _closing_loc(lines, i, 1) or line.loc
                scope, last = self.scope_of(line, inner_prefix, top)
                reads = [env[v] for v in _operands(line.rest) if v in env]
                stack.append({"kind": "case", "region": 0, "label": "branch_0", "line": line, "reads": reads,
                              "scope": scope + [("group", last or "case")]})
                continue
            if line.opens:  # an op with a region of its own (reducer, comparator): the op is one
                stack.append({"kind": "hidden", "region": 0, "label": None, "line": line, "reads": [],
                              "scope": inner_prefix})
                continue
            if line.op in ("func.call", "call"):
                self.call(line, env, inner_prefix, top)
                continue
            self.emit(line, line.rest, env, inner_prefix, top)
        self.depth -= 1
        return returned

    def region_prefix(self, stack: list, prefix: list) -> list:
        """An op in a ``while`` / ``case`` region is named from its function, like the region op
        (``.../while/body/add``): the function's prefix, whatever the region."""
        return prefix

    def close(self, frame: dict, closing: str, env: dict, prefix: list, top: bool) -> None:
        """A region op's last line: a hidden-region op is emitted (its types and location are on
        this line); a ``while`` / ``case`` is one op reading its regions' results."""
        line = frame["line"]
        if line is None:
            return
        loc = line.loc
        m = _TRAILING_LOC.search(closing)
        if m:
            loc = _parse_loc(m.group(1))
        if frame["kind"] == "hidden":
            rest = line.rest + " " + (closing[:m.start()] if m else closing)
            self.emit(_Line(line.results, line.op, rest, loc, False), rest, env, frame["scope"], top)
            return
        if frame["kind"] == "while":  # "stablehlo.while(...) : types" on its first line
            head = line.rest
            types = _tensor_types(head[head.rfind(" : "):]) if " : " in head else []
            types = (types + [(None, None)] * len(line.results))[:len(line.results)]
        else:
            types = _result_types(closing, len(line.results))
        self.add(JaxOp(op=frame["kind"], scope=frame["scope"], inputs=[r for r in frame["reads"] if r],
                       outputs=self.define(line.results, env), shapes=types,
                       source=self.locs.frame(loc)))

    def define(self, results: list, env: dict) -> list:
        out = []
        for r in results:
            v = self.fresh()
            env[r] = v
            out.append(v)
        return out

    def add(self, op: JaxOp) -> None:
        self.ops.append(op)
        if self.max_ops is not None and len(self.ops) > self.max_ops:
            raise GraphTooLarge(self.what, len(self.ops), self.max_ops)

    def emit(self, line: _Line, rest: str, env: dict, prefix: list, top: bool) -> None:
        reads = []
        for v in _operands(rest):
            if v not in env:
                raise errors.InvalidArgumentError(f"{self.what}: {line.op} reads {v}, which no op defines before it")
            reads.append(env[v])
        scope, _ = self.scope_of(line, prefix, top)
        short = line.op.split(".", 1)[-1]
        params = {"_target": line.op}
        attrs = _attributes(rest)
        if attrs:
            params["attributes"] = attrs
        op = JaxOp(op=short, scope=scope, inputs=reads, outputs=self.define(line.results, env),
                   shapes=_result_types(rest, len(line.results)), params={k: v for k, v in params.items() if not k.startswith("_")},
                   source=self.locs.frame(line.loc))
        self.add(op)

    def call(self, line: _Line, env: dict, prefix: list, top: bool) -> None:
        m = re.match(r"\s*@([\w.$-]+)\((.*?)\)", line.rest)
        callee = self.funcs.get(m.group(1)) if m else None
        if callee is None:
            raise errors.InvalidArgumentError(f"{self.what}: func.call of an undefined function {line.rest.strip()[:80]}")
        args = [env.get(v) for v in _VALUE.findall(m.group(2))]
        scope, last = self.scope_of(line, prefix, top)
        label, frames = jax_scopes.unwrap(last or "")
        if frames:  # jvp(jit(f)): the transformation frames, then the call's group
            scope = scope + [("stack", "".join(f"{f}(" for f in frames) + ")" * len(frames))]
        if label and label not in _CALLS_HIDDEN and not label.endswith(":"):
            scope = scope + [("group", label)]
        inner = {name: value for (name, _, _), value in zip(callee.args, args) if value is not None}
        outs = self.run(callee, inner, scope, False)
        for r, v in zip(line.results, outs):
            if v is not None:
                env[r] = v


def _closing_loc(lines: list, start: int, depth: int):
    """The location on the line closing the region op whose first line is before ``start``
    (``depth`` regions already open on it): a region op's location follows its regions."""
    opened = depth > 0
    for raw in lines[start:]:
        blanked = _strip_strings(raw) if "{" in raw or "}" in raw else raw
        depth += blanked.count("{") - blanked.count("}")
        opened = opened or depth > 0
        if opened and depth <= 0:
            m = _TRAILING_LOC.search(raw.rstrip())
            return _parse_loc(m.group(1)) if m else None
    return None


def _split_funcs(lines: list[str], what: str) -> dict:
    """name -> _Func; regions are counted on the lines with their strings blanked (a brace in
    a location or an attribute string nests nothing), the bodies keep the lines as written."""
    funcs: dict = {}
    current = None
    depth = 0
    for raw in lines:
        if current is None:
            m = _FUNC.match(raw)
            if m:
                current = _Func(m.group(1), [], m.group(3) or "", [])
                current.args = [(a.group(1), a.group(2), a.group(3)) for a in _ARG.finditer(m.group(2))]
                depth = 1
            continue
        blanked = _strip_strings(raw) if "{" in raw or "}" in raw else raw
        depth += blanked.count("{") - blanked.count("}")
        if depth <= 0:
            funcs[current.name] = current
            current = None
            continue
        current.body.append(raw)
    if current is not None:
        raise errors.InvalidArgumentError(f"{what}: func.func @{current.name} is not closed")
    return funcs


def _strip_strings(line: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)


def parse_stablehlo(text: str, what: str, max_ops: Optional[int] = None) -> JaxProgram:
    """The ``JaxProgram`` of StableHLO text (module docstring)."""
    aliases, lines = {}, []
    for raw in text.splitlines():
        m = _LOC_ALIAS.match(raw.strip())
        if m:
            aliases[m.group(1)] = m.group(2)
        else:
            lines.append(raw)
    funcs = _split_funcs(lines, what)
    main = funcs.get("main") or next((f for f in funcs.values()), None)
    if main is None:
        raise errors.InvalidArgumentError(
            f"{what} is not StableHLO text this reader understands: no func.func @main "
            "(write it with jax.jit(f).lower(*args).as_text(debug_info=True))")
    locs = _Locations(aliases)
    reader = _Reader(funcs, locs, what, max_ops)
    env: dict = {}
    inputs = []
    for name, type_text, loc in main.args:
        path, role = _input_role(_path(_loc_string(loc)) or (name.lstrip("%"),))
        dims = _tensor_types(type_text)
        value = reader.fresh()
        env[name] = value
        inputs.append(JaxInput(path=path, value=value, role=role, shape=dims[0][0] if dims else None,
                               dtype=dims[0][1] if dims else None))
    returned = reader.run(main, env, [], True)
    infos = _RESULT_INFO.findall(main.results)
    outputs = []
    for k, v in enumerate(returned):
        if v is None:
            continue
        path = _path(infos[k]) if k < len(infos) else ()
        path = path[1:] if path[:1] == ("result",) else path
        outputs.append((v, path or ((str(k),) if len(returned) > 1 else ("output",))))  # as the jaxpr reader
    return JaxProgram(inputs=inputs, ops=reader.ops, outputs=outputs, namespace="stablehlo")


def _loc_string(loc: Optional[str]) -> Optional[str]:
    if not loc:
        return None
    parsed = _parse_loc(loc)
    return parsed.name if isinstance(parsed, _Name) else None
