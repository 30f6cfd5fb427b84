"""Where each node of an ONNX graph goes: the module call (scope) that computed it.

Three sources, tried in order ([ONNX-PROTO], [TORCH-ONNX] in ``docs/references.md``):

- **torch.export-based exporter** (``torch.onnx.export(..., dynamo=True)``, the default): every
  node carries ``metadata_props`` ``pkg.torch.onnx.name_scopes`` and
  ``pkg.torch.onnx.class_hierarchy``, the Python ``repr`` of two lists of the same length: the
  module path of each module call on the stack (``''`` for the root, then ``'layer1'``,
  ``'layer1.0'``, ...) and its qualified class, each ending with the FX node's own name and
  target (not read here). A module call becomes the scope ``Class[attr]`` (``attr`` the last
  component of the module path; the root is just ``Class``): ``TinyResNet/Sequential[layer1]/
  BasicBlock[0]/ReLU[relu]``. The exporter drops torch.export's per-call keys, so calls are
  told apart by order: nodes come in execution order, and a module call ends where a node
  leaves its scope; its next call is ``ReLU[relu@1]`` (``@k``: that module's calls counted inside
  the same parent call, as ``tb_graph_plugin.torch.add_graph`` names them, so the relus of a
  block's second call are ``BasicBlock[mix@1]/ReLU[relu]``, ``ReLU[relu@1]``). Two calls with no
  node between them read as one.
- **TorchScript-based exporter** (``dynamo=False``): node names are ``/layer1/layer1.0/conv1/Conv``,
  one component per module call (the module's name after the last non-numeric dot:
  ``layer1.0``, ``self``), a repeated call's whole scope name suffixed by the exporter
  (``relu_1``, ``mix/conv1_1``, ``mix_1``: the suffix lands on the innermost part, whichever
  module was called again). The components, cut to their last dotted part (``layer1.0`` ->
  ``0``), are the scopes, and the calls are told apart by order as above (the suffix dropped):
  ``layer1/0/conv1``, ``layer1/0/relu@1``; no class is known.
- **anything else**: no scopes (the node names are kept as they are by ``onnx_model``).

Pre-condition: ``graph`` is a decoded ``onnx_proto`` GraphProto. Post-condition: ``place``
returns one scope per node (``""``: top level; None: the file says nothing), the module class and source line of each node
where recorded, and ``modules``: module path -> (scope, class) of its first call, to place the
parameters (``conv1.weight`` -> the scope of module ``conv1``). Malformed metadata never raises:
that node is placed as if it had none.
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Optional

from tb_graph_plugin.ingest.onnx_proto import text

__all__ = ["Placement", "place", "short_class"]

NAME_SCOPES = "pkg.torch.onnx.name_scopes"
CLASS_HIERARCHY = "pkg.torch.onnx.class_hierarchy"
STACK_TRACE = "pkg.torch.onnx.stack_trace"
_MAX_METADATA = 1 << 16  # characters of one metadata value that are read
_FRAME = re.compile(r'File "([^"\n]+)", line (\d+), in ([^\s]+)')
_CALL = re.compile(r"^(.*)@(\d+)$")
_SUFFIX = re.compile(r"^(.+)_(\d+)$")
_TORCH_FILE = re.compile(r"[/\\]torch[/\\]")


@dataclasses.dataclass
class Placement:
    """Where each node goes: ``scopes[i]`` for ``graph.node[i]`` (``""`` = top level, None: the
    file says nothing, e.g. a TorchScript-exporter node outside every module call)."""

    kind: str  # "torch.export" | "torchscript" | "names"
    scopes: list[Optional[str]]
    module_class: list[Optional[str]]  # qualified class of the innermost module call
    source: list[Optional[str]]  # "file:line in function"
    modules: dict[str, tuple[str, Optional[str]]]  # module path -> (scope, class) of its first call
    root: str  # scope of what belongs to no module call ("" or the root module's scope)


def short_class(qualified: str) -> str:
    """``torch.nn.modules.conv.Conv2d`` -> ``Conv2d``."""
    return _component(qualified.rsplit(".", 1)[-1]) or "Module"


def _component(name: str) -> str:
    """A scope component: no ``/`` (it would nest)."""
    return name.replace("/", "_").strip()


def _metadata(node) -> dict[str, str]:
    return {text(p.key): text(p.value[:_MAX_METADATA]) for p in node.metadata_props}


def _str_list(value: Optional[str]) -> Optional[list[str]]:
    """The list of strings ``value`` is the ``repr`` of; None when it is not one."""
    if not value:
        return None
    try:
        found = ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if isinstance(found, list) and all(isinstance(x, str) for x in found):
        return found
    return None


def _source(trace: Optional[str]) -> Optional[str]:
    """The innermost frame of a stack trace outside torch itself (else the innermost one)."""
    frames = _FRAME.findall(trace or "")
    if not frames:
        return None
    own = [f for f in frames if not _TORCH_FILE.search(f[0])]
    path, line, function = (own or frames)[-1]
    return f"{path}:{line} in {function}"


def place(graph) -> Placement:
    metadata = [_metadata(node) for node in graph.node]
    if any(NAME_SCOPES in m for m in metadata):
        return _from_module_stacks(metadata)
    names = [text(node.name) for node in graph.node]
    if any(name.startswith("/") for name in names):
        return _from_scoped_names(names)
    n = len(names)
    return Placement("names", [""] * n, [None] * n, [None] * n, {}, "")


def _from_module_stacks(metadata: list[dict[str, str]]) -> Placement:
    """Scopes of the torch.export-based exporter, from each node's module stack metadata."""
    stacks: list[Optional[list[tuple[str, Optional[str]]]]] = []
    for m in metadata:
        paths, hierarchy = _str_list(m.get(NAME_SCOPES)), _str_list(m.get(CLASS_HIERARCHY))
        if not paths or not hierarchy or len(paths) != len(hierarchy) or len(paths) < 2:
            stacks.append(None)  # placed at the root, once it is known
        else:
            stacks.append(list(zip(paths[:-1], hierarchy[:-1])))  # the last entry is the FX node
    placement = _module_calls("torch.export", stacks, [_source(m.get(STACK_TRACE)) for m in metadata])
    placement.scopes = [placement.root if s is None else s for s in placement.scopes]
    return placement


def _from_scoped_names(names: list[str]) -> Placement:
    """Scopes of the TorchScript-based exporter, from ``/a/a.0/b/Op`` node names.

    The exporter makes each module call's whole scope name unique by suffixing its last part
    (``layer1/layer1.0/relu_1``); such a suffix is dropped when the name without it came first,
    and the calls are then told apart by order, as for the other exporter. The module path of
    each part is rebuilt from the parts: ``layer1``, ``layer1.0`` -> ``layer1.0``.
    """
    stacks: list[Optional[list[tuple[str, Optional[str]]]]] = []
    seen: set[str] = set()
    for name in names:
        if not name.startswith("/"):
            stacks.append(None)  # outside every module call, or not said
            continue
        parts = [p for p in name.split("/")[1:-1] if p]
        full = "/".join(parts)
        repeated = _SUFFIX.match(parts[-1]) if parts else None
        if repeated and "/".join([*parts[:-1], repeated.group(1)]) in seen:
            parts[-1] = repeated.group(1)
        seen.add(full)
        path, stack = "", []
        for i, part in enumerate(parts):
            if i and part.startswith(parts[i - 1] + "."):  # the parent's name repeated
                path = path[: len(path) - len(parts[i - 1])] + part
            else:
                path = f"{path}.{part}" if path else part
            stack.append((path, None))
        stacks.append(stack)
    return _module_calls("torchscript", stacks, [None] * len(names))


def _module_calls(kind: str, stacks: list, sources: list[Optional[str]]) -> Placement:
    """One scope per module call: nodes come in execution order, and a call ends where a node
    leaves its module (a node with no stack, None, changes nothing)."""
    scopes: list[Optional[str]] = []
    classes: list[Optional[str]] = []
    modules: dict[str, tuple[str, Optional[str]]] = {}
    calls: dict = {}  # (parent call's scope, module path) -> calls seen
    open_calls: list[tuple[str, str]] = []  # (module path, scope component) of the calls open now
    root = ""
    for stack in stacks:
        if stack is None:
            scopes.append(None)
            classes.append(None)
            continue
        same = 0
        while same < min(len(open_calls), len(stack)) and open_calls[same][0] == stack[same][0]:
            same += 1
        del open_calls[same:]
        for path, qualified in stack[same:]:
            parent = "/".join(c for _, c in open_calls)
            open_calls.append((path, _call_component(path, qualified, calls, parent, not open_calls)))
            modules.setdefault(_CALL.sub(r"\1", path), ("/".join(c for _, c in open_calls), qualified))
        if not root and stack and stack[0][0] == "" and stack[0][1]:
            root = open_calls[0][1]
        scopes.append("/".join(c for _, c in open_calls))
        classes.append(stack[-1][1] if stack else None)
    return Placement(kind, scopes, classes, sources, modules, root)


def _call_component(path: str, qualified: Optional[str], calls: dict, parent: str, is_root: bool) -> str:
    """``Class[attr]``, ``Class[attr@k]`` for the module's k-th call inside the same parent call
    (as ``ingest/torch_scopes.py`` numbers them), ``Class`` for the root module; ``attr``,
    ``attr@k`` when the class is not known."""
    explicit = _CALL.match(path)
    base = explicit.group(1) if explicit else path
    k = calls.get((parent, base), 0)
    calls[(parent, base)] = k + 1
    cls = short_class(qualified) if qualified else None
    if is_root and not base:
        return cls or "?"
    attr = _component(base.rsplit(".", 1)[-1]) or "?"
    attr = f"{attr}@{k}" if k else attr
    return f"{cls}[{attr}]" if cls else attr
