"""Names for a torch.export program's ops: one scope per module call, glue named by its function.

Used by ``ingest/exported_program.py`` (see its docstring for the naming it produces). Three
steps, in order (a fourth for a training step's other phases):

1. ``module scopes``: each op's ``nn_module_stack`` (outermost first) -> ``Root/Class[attr]/...``.
   torch numbers calls per module path over the whole program (``enc.fc@1`` is the second
   call of ``enc.fc`` anywhere); here a call is numbered among the calls of that module inside
   the same parent call, so the first call of ``fc`` in each call of ``enc`` is ``Linear[fc]``.
   A path that skips levels (``model`` -> ``model.layers.0``) gets the skipped containers as
   plain scopes (``layers``); a skipped level that is a module called in the same caller call
   takes the op into that call (LLaVA's token embedding, called outside ``language_model``'s
   forward, is in ``LlamaModel[language_model]``).
1b. ``interleaved containers``: a plain container scope whose ops close a cycle (diffusers' ``resnets``
   and ``attentions``, called in turn) is removed: its modules become its parent's.
2. ``glue``: ops whose innermost ``forward`` frame is one source line calling a function
   (``causal_mask = create_causal_mask(``, ``"full_attention": create_causal_mask(``,
   ``self.get_extended_attention_mask(``; torch keeps
   only ``forward`` frames, so the callee is read from the line) share a scope ``callee()``
   when two or more ops of one module call do, the group would not be all the call holds, and it
   closes no cycle (checked on the ops between its first and last, in execution order).
   Calls of torch (``torch.``, ``F.``), tensor methods, builtins and submodules are not glue.
3. ``leaves``: an op is named after its op (``add``, ``add_1`` in its scope); parameters after
   their attribute in their module's first call; inputs ``input/<arg>``, outputs
   ``output/<field>``.

4. ``training step`` (ops with a ``phase``, ``tb_graph_plugin.torch.training``): steps 1b and 2 see
   the forward ops only; the loss's ops are in ``loss``; a backward op is in ``backward/`` + the
   final scope of the forward op it differentiates (``backward/Net/Conv2d[conv]``, as TF's
   ``gradients/`` mirrors the forward); an optimizer op in ``optimizer/`` + its parameter's path
   with dots as slashes (``optimizer/fc/weight``), the optimizer's state there too
   (``optimizer/fc/weight/momentum_buffer``); a constant no forward op reads (the loss's
   targets, a fresh optimizer's ``step``) beside its first reader (``loss/lifted_tensor_0``).

Pre: ops in execution order (a torch.export graph's node order). Post: every op, placeholder
and output has a distinct name; no name is also a scope of another name.
"""

from __future__ import annotations

import builtins
import dataclasses
import re
from typing import Optional

__all__ = ["Frame", "Names", "call_scope", "last_frame", "callee", "name_ops"]

OPTIMIZER_STATE = "torch::optimizer_state"

_FRAME = re.compile(r'File "([^"\n]*)", line (\d+), in ([^\n]*)(?:\n([^\n]*))?')
_NOT_GLUE = frozenset(dir(builtins)) | {"super"}
_ASSIGN = re.compile(r"^[^=()\"']*?(?<![=!<>])=(?!=)")
_DICT_KEY = re.compile(r"""^\s*(["'])[^"']*\1\s*:""")


@dataclasses.dataclass(frozen=True)
class Frame:
    file: str
    line: int
    function: str
    code: str

    @property
    def short_file(self) -> str:
        """The path from the package down (after ``site-packages/``), else as recorded."""
        i = self.file.rfind("site-packages/")
        return self.file[i + len("site-packages/"):] if i >= 0 else self.file


@dataclasses.dataclass
class Names:
    ops: dict  # fx node name -> GraphDef name
    placeholders: dict  # placeholder name -> GraphDef name
    outputs: list  # [(tensor name, GraphDef name)]
    glue_groups: list  # GraphDef scope names made in step 2


def last_frame(stack_trace: str) -> Optional[Frame]:
    """The innermost frame of a recorded stack trace.

    >>> last_frame('File "/a/site-packages/t/m.py", line 3, in forward\\n    y = f(x)').short_file
    't/m.py'
    """
    if not stack_trace:
        return None
    match = None
    for match in _FRAME.finditer(stack_trace):
        pass
    if match is None:
        return None
    return Frame(match.group(1), int(match.group(2)), match.group(3).strip(), (match.group(4) or "").strip())


def callee(code: str) -> Optional[str]:
    """The function a source line calls first on its right-hand side, when it may be glue.

    >>> callee("causal_mask = create_causal_mask("), callee("return self._mask(x)")
    ('create_causal_mask', 'self._mask')
    >>> callee('"full_attention": create_causal_mask(**kw),')  # a dict entry (Qwen2)
    'create_causal_mask'
    >>> callee("x = torch.arange(3)"), callee("y = x.view(2, 3)"), callee("n = len(x)")
    (None, None, None)
    """
    text = code.strip()
    if text.startswith("return "):
        text = text[len("return "):]
    m = _ASSIGN.match(text) or _DICT_KEY.match(text)
    if m:
        text = text[m.end():]
    m = re.match(r"\s*(?:await\s+)?((?:self\.)?[A-Za-z_]\w*)\s*\(", text)
    if not m:
        return None
    name = m.group(1)
    return None if name in _NOT_GLUE else name


def _component(text: str) -> str:
    text = text.replace("/", "_").strip()
    return text or "_"


def _short_class(qualname: str) -> str:
    return _component(qualname.rsplit(".", 1)[-1])


def call_scope(scope: str, parent_path: str, path: str, class_name: str, call: int) -> str:
    """The scope of one module call, the one naming rule for graphs and for the data logged on
    them (``tb_graph_plugin.torch.node_data``): ``scope`` is the caller's call scope, ``parent_path``
    its module path, ``path`` the called module's (``layers.3.self_attn``), ``class_name`` its short
    class name and ``call`` how many calls of it came before in this caller call.

    The module's path below the caller's names the containers between them (plain scopes) and its
    attribute (``layers/LlamaDecoderLayer[3]``); a module owned elsewhere (a shared embedding) is
    named by its own attribute; a second call is ``attr@1``.

    >>> call_scope("M", "", "layers.3", "Block", 0), call_scope("M/Block[3]", "layers.3", "relu", "ReLU", 1)
    ('M/layers/Block[3]', 'M/Block[3]/ReLU[relu@1]')
    """
    if not parent_path or path.startswith(parent_path + "."):
        rel = path[len(parent_path) + 1:] if parent_path else path
    else:  # a module owned elsewhere (a shared embedding) called here: its attribute
        rel = path.rsplit(".", 1)[-1]
    parts = rel.split(".")
    for container in parts[:-1]:
        scope = f"{scope}/{_component(container)}"
    attr = parts[-1] + (f"@{call}" if call else "")
    return f"{scope}/{_component(class_name)}[{_component(attr)}]"


def _module_scopes(ops) -> tuple[str, list[str], list[str], dict[str, str], set[str]]:
    """(root, scope per op, innermost module path per op, module path -> first scope, called paths).

    Two walks: the first records each call's scope; the second names an op whose stack skips a
    module that is called in the same caller call (LLaVA's ``language_model.embed_tokens``,
    called through ``get_input_embeddings()`` beside ``language_model``'s own call) inside that
    module's first call there, not in a plain container of the same name (issue 40: one module,
    two boxes)."""
    root = next((_short_class(op.module_stack[0][2]) for op in ops
                 if op.module_stack and op.module_stack[0][1] == ""), "model")
    first_call: dict[tuple[str, str], str] = {}  # (caller scope, module path) -> its first call's scope

    def walk(reroute: bool):
        calls: dict[tuple[str, str], list[str]] = {}
        first_scope: dict[str, str] = {"": root}
        called = {""}
        scopes, paths = [], []
        for op in ops:
            scope, parent_path = root, ""
            for key, path, cls in op.module_stack:
                if path == "" and scope == root:
                    continue
                if reroute:
                    scope, parent_path = _through_called(scope, parent_path, path, first_call)
                keys = calls.setdefault((scope, path), [])
                if key not in keys:
                    keys.append(key)
                caller = scope
                scope = call_scope(scope, parent_path, path, cls.rsplit(".", 1)[-1], keys.index(key))
                first_call.setdefault((caller, path), scope)
                first_scope.setdefault(path, scope)
                called.add(path)
                parent_path = path
            scopes.append(scope)
            paths.append(parent_path)
        return scopes, paths, first_scope, called

    walk(False)
    scopes, paths, first_scope, called = walk(True)
    return root, scopes, paths, first_scope, called


def _through_called(scope: str, parent_path: str, path: str, first_call: dict) -> tuple[str, str]:
    """(caller scope, caller path) for a call of ``path`` from ``scope``: the deepest module
    between the caller and ``path`` that is itself called from the same caller scope (then
    ``path`` is named inside that call), else the caller as it is."""
    if not parent_path:  # the root's call
        rel = path
    elif path.startswith(parent_path + "."):
        rel = path[len(parent_path) + 1:]
    else:
        return scope, parent_path
    parts = rel.split(".")
    for j in range(len(parts) - 1, 0, -1):
        between = ".".join(([parent_path] if parent_path else []) + parts[:j])
        inner = first_call.get((scope, between))
        if inner is not None:
            return inner, between
    return scope, parent_path


def _containers(scopes: list[str]) -> list[str]:
    """Plain container scopes (``resnets``: a ModuleList no forward runs), outermost first."""
    out = set()
    for scope in set(scopes):
        parts = scope.split("/")
        for k in range(1, len(parts)):
            part = parts[k]
            if not part.endswith("]") and not part.endswith(")") and "@" not in part:
                out.add("/".join(parts[:k + 1]))
    return sorted(out, key=lambda c: (c.count("/"), c))


def _dissolve_interleaved(ops, scopes: list[str], first_scope: dict[str, str], producer: dict[str, int]) -> None:
    """Containers whose calls interleave with a sibling's give way (issue 40: diffusers calls
    ``resnets[0]``, ``attentions[0]``, ``resnets[1]``: as two sibling groups they made a cycle and
    drew edges reversed): a container whose ops close a cycle (:func:`_closes_no_cycle`) is removed
    from the names, its modules become its parent's (``mid_block/ResnetBlock2D[0]``,
    ``mid_block/Transformer2DModel[0]``, ``mid_block/ResnetBlock2D[1]``), unless a name would
    then clash. Updates ``scopes`` and ``first_scope`` in place."""
    for container in _containers(scopes):
        prefix = container + "/"
        members = [i for i, s in enumerate(scopes) if s.startswith(prefix)]
        if len(members) < 2 or _closes_no_cycle(ops, members, producer):
            continue
        parent = container.rsplit("/", 1)[0]
        moved = {s[:len(parent) + 1] + s[len(prefix):] for s in (scopes[i] for i in members)}
        others = {s for s in scopes if s.startswith(parent + "/") and not s.startswith(prefix)}
        if any(m == o or o.startswith(m + "/") or m.startswith(o + "/") for m in moved for o in others):
            continue  # two lists holding the same module name: the containers stay

        def lift(s: str) -> str:
            return parent + "/" + s[len(prefix):] if s.startswith(prefix) else s

        scopes[:] = [lift(s) for s in scopes]
        for path, s in first_scope.items():
            first_scope[path] = lift(s)


def _producers(ops) -> dict[str, int]:
    """Tensor name -> the index of the op that makes it."""
    producer: dict[str, int] = {}
    for i, op in enumerate(ops):
        for o in op.outputs:
            if o is not None:
                producer.setdefault(o, i)
    return producer


def _glue(ops, scopes: list[str], paths: list[str], called: set[str]) -> dict[int, str]:
    """op index -> glue scope name (step 2)."""
    by_key: dict[tuple, list[int]] = {}
    own: dict[str, int] = {}
    for i, op in enumerate(ops):
        own[scopes[i]] = own.get(scopes[i], 0) + 1
        frame = op.frame
        name = callee(frame.code) if frame else None
        if not name:
            continue
        if name.startswith("self."):
            attr = name[len("self."):]
            if (f"{paths[i]}.{attr}" if paths[i] else attr) in called:
                continue  # a submodule call: its ops are in its own scope already
        by_key.setdefault((scopes[i], frame.file, frame.line, name), []).append(i)
    producer = _producers(ops)
    has_subscopes = {s[:k] for s in own for k in range(len(s)) if s[k] == "/"}
    glue: dict[int, str] = {}
    used: dict[tuple[str, str], int] = {}
    for (scope, _file, _line, name), members in by_key.items():
        alone = len(members) >= own[scope] and scope not in has_subscopes  # the group would be its scope
        if len(members) < 2 or alone or not _closes_no_cycle(ops, members, producer):
            continue
        base = name[len("self."):] if name.startswith("self.") else name
        j = used.get((scope, base), 0)
        used[(scope, base)] = j + 1
        group = f"{scope}/{_component(base)}()" + (f"@{j}" if j else "")
        for i in members:
            glue[i] = group
    return glue


def _closes_no_cycle(ops, members: list[int], producer: dict[str, int]) -> bool:
    """No path leaves the group and comes back (only ops between its first and last can)."""
    inside = set(members)
    lo, hi = members[0], members[-1]
    reached: set[int] = set()  # ops outside the group that a member reaches, within the span
    for i in range(lo, hi + 1):
        sources = {producer.get(r) for r in ops[i].refs}
        if i in inside:
            if sources & reached:
                return False
        elif sources & (inside | reached):
            reached.add(i)
    return True


def _optimizer_scope(path: str) -> str:
    """``optimizer/`` + a parameter's path with dots as slashes (``optimizer/fc/weight``)."""
    return "optimizer/" + "/".join(_component(p) for p in path.split(".")) if path else "optimizer"


def _training_scopes(ops, final: list) -> None:
    """Step 4, a training step's other phases (``tb_graph_plugin.torch.training``): the loss's
    ops in ``loss``; a backward op in ``backward/`` + the scope of the forward op it
    differentiates (``backward/Net/Conv2d[conv]``, ``backward/loss``), else ``backward``; an
    optimizer op in ``optimizer/`` + its parameter's path (``optimizer/fc/weight``), else
    ``optimizer``. Updates ``final`` (the forward ops' scopes) in place."""
    for i, op in enumerate(ops):
        if op.phase == "loss":
            final[i] = "loss"
    scope_of = {op.name: final[i] for i, op in enumerate(ops) if op.phase in ("", "forward", "loss")}
    for i, op in enumerate(ops):
        if op.phase == "backward":
            final[i] = "backward/" + scope_of[op.forward] if op.forward in scope_of else "backward"
        elif op.phase == "optimizer":
            final[i] = _optimizer_scope(op.param)


def name_ops(ops, roles: dict, outputs: list) -> Names:
    """Names of every op, placeholder and output (module docstring, steps 1-3; step 4 for the
    ops of a training step)."""
    root, scopes, paths, first_scope, called = _module_scopes(ops)
    model = [i for i, op in enumerate(ops) if getattr(op, "phase", "") in ("", "forward")]
    if len(model) == len(ops):
        _dissolve_interleaved(ops, scopes, first_scope, _producers(ops))
        glue = _glue(ops, scopes, paths, called)
        final = [glue.get(i, s) for i, s in enumerate(scopes)]
    else:
        fops = [ops[i] for i in model]
        fscopes = [scopes[i] for i in model]
        _dissolve_interleaved(fops, fscopes, first_scope, _producers(fops))
        glue = _glue(fops, fscopes, [paths[i] for i in model], called)
        final = list(scopes)
        for k, i in enumerate(model):
            final[i] = glue.get(k, fscopes[k])
        _training_scopes(ops, final)
    taken: set[str] = set()
    for scope in set(final) | set(first_scope.values()):
        parts = scope.split("/")
        taken.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    counters: dict[tuple[str, str], int] = {}

    def unique(scope: str, leaf: str) -> str:
        leaf = _component(leaf)
        while True:
            k = counters.get((scope, leaf), 0)
            counters[(scope, leaf)] = k + 1
            name = f"{scope}/{leaf}" + (f"_{k}" if k else "")
            if name not in taken:
                taken.add(name)
                return name

    training = len(model) != len(ops)
    readers: dict[str, list[int]] = {}
    for i, op in enumerate(ops if training else ()):
        for r in op.refs:
            readers.setdefault(r, []).append(i)
    forward_scopes = {final[i] for i in model} if training else set()
    placeholders = {}
    for placeholder, (role, target) in roles.items():
        if role == "IO Node":
            placeholders[placeholder] = unique("input", target)
            continue
        if role == OPTIMIZER_STATE:
            path, _, state = target.partition(":")
            placeholders[placeholder] = unique(_optimizer_scope(path), state)
            continue
        if training and role == "torch::constant" and "." not in target:
            scopes_read = [final[i] for i in readers.get(placeholder, ())]
            if scopes_read and not (set(scopes_read) & forward_scopes):
                # a constant only the loss (and its backward) or one parameter's update reads (the
                # loss's targets, a fresh optimizer's ``step``): beside its first reader, not at the root
                placeholders[placeholder] = unique(scopes_read[0], target.lstrip("_"))
                continue
        owner, _, attr = target.rpartition(".")
        rest = [attr]
        while owner and owner not in first_scope:
            owner, _, up = owner.rpartition(".")
            rest.insert(0, up)
        placeholders[placeholder] = unique(first_scope.get(owner, root), ".".join(rest))
    names = {op.name: unique(final[i], op.op) for i, op in enumerate(ops)}
    out = [(ref, unique("output", field)) for ref, field in outputs]
    return Names(ops=names, placeholders=placeholders, outputs=out, glue_groups=sorted(set(glue.values())))
