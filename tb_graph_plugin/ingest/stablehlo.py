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
  (``.../while/body/add``, ``.../cond/branch_1/mul``: JAX's ``branch_1_fun``), and the ``stablehlo.while`` /
  ``stablehlo.case`` itself is one op reading its regions' results, in a group named as its
  location (``while``, ``cond``); the bodies of other region ops (a ``reduce``'s reducer, a ``scatter``'s update,
  a ``sort``'s comparator) belong to their op and are not drawn;
* op types ``stablehlo::<op>`` (``chlo.square`` is ``stablehlo::square``, ``_target`` keeps the
  dialect), a ``constant`` drawn beside its consumer; output shapes and element types from the
  result types; the attribute text (``contracting_dims = [1] x [0]``) as ``attributes``.

JAX lowers ``scan`` to ``while``: a ``while`` whose counter starts from a constant JAX named
``.../scan`` is read as the scan it was (its ``body`` the group ``scan ×N``, N the bound its
``cond`` compares with; its ``cond`` in ``scan ×N/cond``), as the jaxpr reader names it.

The text is read by ``mlir_text`` (lines, types, functions) and ``mlir_locations`` (``loc(...)``);
this module walks ``@main``, inlining calls, and names the result through ``jax_program``.

Pre: ``blob`` the file's bytes. Post: a GraphDef, or ``InvalidArgumentError`` saying why not
(not UTF-8, no ``func.func @main``, an op reading a value never defined, over ``max_ops`` ops).
"""

from __future__ import annotations

import re
from typing import Optional

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.ingest import jax_program, jax_scopes
from tb_graph_plugin.ingest.jax_program import JaxInput, JaxOp, JaxProgram
from tb_graph_plugin.ingest.mlir_locations import Locations, Name, parse_loc
from tb_graph_plugin.ingest.mlir_text import (ITER_ARG, LOC_ALIAS, RESULT_INFO, TRAILING_LOC, VALUE, Func, Line,
                                              attributes, closing_loc, operands, parse_line, pytree_path, result_types,
                                              split_funcs, tensor_types)
from tb_graph_plugin.ingest.too_large import GraphTooLarge

__all__ = ["looks_like_stablehlo", "read_stablehlo", "stablehlo_to_graph_def", "parse_stablehlo"]

_CALLS_HIDDEN = ("closed_call", "core_call", "jit", "remat", "checkpoint", "pjit")
_BRANCH = re.compile(r"^branch_(\d+)_fun$")
_TRIP_COUNT = re.compile(r"stablehlo\.constant dense<(\d+)> : tensor<i(?:32|64)>")


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


def _input_role(path: tuple) -> tuple[tuple, str]:
    arg, rest = (path[0], path[1:]) if path else ("input", ())
    if rest[:1] == ("params",):
        return rest, "param"
    if arg == "params":
        return ("params",) + rest, "param"
    return (arg,) + rest, "input"


class _Reader:
    def __init__(self, funcs: dict, locs: Locations, what: str, max_ops: Optional[int]):
        self.funcs, self.locs, self.what, self.max_ops = funcs, locs, what, max_ops
        self.ops: list[JaxOp] = []
        self.count = 0
        self.depth = 0
        self.scans: list = []  # [(name parts before "while", label)] of the scans being read

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def scope_of(self, line: Line, prefix: list, top: bool) -> tuple[list, Optional[str]]:
        """(scope segments, last name component) of an op at this location."""
        parts = self.name_parts(line, top)
        for head, label in reversed(self.scans):  # a scan's while: its body is the scan's group
            k = len(head)
            if parts[:k] == head and parts[k:k + 1] == ["while"]:
                rest = parts[k + 2:] if parts[k + 1:k + 2] == ["body"] else parts[k + 1:]
                parts = head + [label] + rest
                break
        last = parts.pop() if parts else None
        return prefix + ([("stack", "/".join(parts))] if parts else []), last

    def run(self, func: Func, env: dict, prefix: list, top: bool) -> list:
        """Read ``func``'s body with ``env`` (its argument values); the values it returns."""
        self.depth += 1
        if self.depth > 64:
            raise errors.InvalidArgumentError(f"{self.what}: func.call nests more than 64 deep (recursion?)")
        lines = func.body
        returned: list = []
        stack: list = []  # open region frames: dict(kind, scope, reads, env, op line)
        made_by: dict = {}  # SSA name -> the location of the line defining it
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
                if frame.get("scan"):
                    self.scans.pop()
                continue
            hidden = any(f["kind"] == "hidden" for f in stack)
            if stripped in ("cond {",) and stack and stack[-1]["kind"] == "while":
                continue
            line = parse_line(raw)
            if line is not None:
                for r in line.results:
                    made_by[r] = line.loc
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
                values = [env.get(v) for v in operands(line.rest)]
                if stack:
                    stack[-1]["reads"].extend(v for v in values if v)
                else:
                    returned = values
                continue
            if line.op == "stablehlo.while":
                inits = ITER_ARG.findall(line.rest)
                for name, value in inits:
                    env[name] = env.get(value)
                line.loc = closing_loc(lines, i, 0) or line.loc
                scope, last = self.scope_of(line, inner_prefix, top)
                scan = self.scan_label(inits, made_by, lines, i)
                if scan:  # lowered from a scan: read as the jaxpr reads it (``scan ×N``)
                    self.scans.append((self.name_parts(line, top)[:-1], scan))
                stack.append({"kind": "while", "region": 0, "label": "cond", "line": line, "reads": [],
                              "scope": scope + [("group", scan or last or "while")], "scan": bool(scan)})
                continue
            if line.op == "stablehlo.case" and line.opens:
                line.loc = closing_loc(lines, i, 1) or line.loc
                scope, last = self.scope_of(line, inner_prefix, top)
                reads = [env[v] for v in operands(line.rest) if v in env]
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

    def name_parts(self, line: Line, top: bool) -> list:
        """The components of an op's location name: without the lowered function (``jit(f)``,
        at the top), a ``cond``'s ``branch_K_fun`` read ``branch_K`` (as the jaxpr reader names it)."""
        parts = [_BRANCH.sub(r"branch_\1", p) for p in (self.locs.op_name(line.loc) or "").split("/") if p]
        if top and parts and parts[0].startswith("jit(") and parts[0].endswith(")"):
            parts = parts[1:]  # the lowered function itself
        return parts

    def scan_label(self, inits: list, made_by: dict, lines: list, start: int) -> Optional[str]:
        """``scan ×N`` when this ``while`` is a lowered ``scan``: JAX names the constant its
        counter starts from ``.../scan``; ``N`` is the ``i32`` constant its ``cond`` compares
        the counter with (``scan`` alone when that is not found)."""
        if not any((self.locs.op_name(made_by.get(v)) or "").rsplit("/", 1)[-1] == "scan" for _, v in inits):
            return None
        for raw in lines[start:start + 8]:
            if raw.strip().startswith("} do {"):
                break
            m = _TRIP_COUNT.search(raw)
            if m:
                return f"scan ×{int(m.group(1))}"
        return "scan"

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
        m = TRAILING_LOC.search(closing)
        if m:
            loc = parse_loc(m.group(1))
        if frame["kind"] == "hidden":
            rest = line.rest + " " + (closing[:m.start()] if m else closing)
            self.emit(Line(line.results, line.op, rest, loc, False), rest, env, frame["scope"], top)
            return
        if frame["kind"] == "while":  # "stablehlo.while(...) : types" on its first line
            head = line.rest
            types = tensor_types(head[head.rfind(" : "):]) if " : " in head else []
            types = (types + [(None, None)] * len(line.results))[:len(line.results)]
        else:
            types = result_types(closing, len(line.results))
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

    def emit(self, line: Line, rest: str, env: dict, prefix: list, top: bool) -> None:
        reads = []
        for v in operands(rest):
            if v not in env:
                raise errors.InvalidArgumentError(f"{self.what}: {line.op} reads {v}, which no op defines before it")
            reads.append(env[v])
        scope, _ = self.scope_of(line, prefix, top)
        short = line.op.split(".", 1)[-1]
        params = {"_target": line.op}
        attrs = attributes(rest)
        if attrs:
            params["attributes"] = attrs
        op = JaxOp(op=short, scope=scope, inputs=reads, outputs=self.define(line.results, env),
                   shapes=result_types(rest, len(line.results)), params={k: v for k, v in params.items() if not k.startswith("_")},
                   source=self.locs.frame(line.loc))
        self.add(op)

    def call(self, line: Line, env: dict, prefix: list, top: bool) -> None:
        m = re.match(r"\s*@([\w.$-]+)\((.*?)\)", line.rest)
        callee = self.funcs.get(m.group(1)) if m else None
        if callee is None:
            raise errors.InvalidArgumentError(f"{self.what}: func.call of an undefined function {line.rest.strip()[:80]}")
        args = [env.get(v) for v in VALUE.findall(m.group(2))]
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


def parse_stablehlo(text: str, what: str, max_ops: Optional[int] = None) -> JaxProgram:
    """The ``JaxProgram`` of StableHLO text (module docstring)."""
    aliases, lines = {}, []
    for raw in text.splitlines():
        m = LOC_ALIAS.match(raw.strip())
        if m:
            aliases[m.group(1)] = m.group(2)
        else:
            lines.append(raw)
    funcs = split_funcs(lines, what)
    main = funcs.get("main") or next((f for f in funcs.values()), None)
    if main is None:
        raise errors.InvalidArgumentError(
            f"{what} is not StableHLO text this reader understands: no func.func @main "
            "(write it with jax.jit(f).lower(*args).as_text(debug_info=True))")
    locs = Locations(aliases)
    reader = _Reader(funcs, locs, what, max_ops)
    env: dict = {}
    inputs = []
    for name, type_text, loc in main.args:
        path, role = _input_role(pytree_path(_loc_string(loc)) or (name.lstrip("%"),))
        dims = tensor_types(type_text)
        value = reader.fresh()
        env[name] = value
        inputs.append(JaxInput(path=path, value=value, role=role, shape=dims[0][0] if dims else None,
                               dtype=dims[0][1] if dims else None))
    returned = reader.run(main, env, [], True)
    infos = RESULT_INFO.findall(main.results)
    outputs = []
    for k, v in enumerate(returned):
        if v is None:
            continue
        path = pytree_path(infos[k]) if k < len(infos) else ()
        path = path[1:] if path[:1] == ("result",) else path
        outputs.append((v, path or ((str(k),) if len(returned) > 1 else ("output",))))  # as the jaxpr reader
    return JaxProgram(inputs=inputs, ops=reader.ops, outputs=outputs, namespace="stablehlo")


def _loc_string(loc: Optional[str]) -> Optional[str]:
    if not loc:
        return None
    parsed = parse_loc(loc)
    return parsed.name if isinstance(parsed, Name) else None
