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
  leaves its scope; its next call is ``ReLU[relu@1]`` (``@k``, the k-th call of that module, as
  torch.export writes it). Two calls with no node between them read as one.
- **TorchScript-based exporter** (``dynamo=False``): node names are ``/layer1/layer1.0/conv1/Conv``,
  one component per module call (the module's name after the last non-numeric dot:
  ``layer1.0``, ``self``), a repeated call suffixed by the exporter (``relu_1``). The components
  are the scopes, each cut to its last dotted part (``layer1.0`` -> ``0``), so ``layer1/0/conv1``;
  no class is known.
- **anything else**: no scopes (the node names are kept as they are by ``onnx_model``).

Pre-condition: ``graph`` is a decoded ``onnx_proto`` GraphProto. Post-condition: ``place``
returns one scope per node (``""``: top level), the module class and source line of each node
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
    """Scopes of the torch.export-based exporter: one per module call, told apart by order."""
    scopes, classes, sources = [], [], []
    modules: dict[str, tuple[str, Optional[str]]] = {}
    calls: dict[str, int] = {}  # module path -> calls seen
    open_calls: list[tuple[str, str]] = []  # (module path, scope component) of the calls open now
    root = ""
    for m in metadata:
        paths, hierarchy = _str_list(m.get(NAME_SCOPES)), _str_list(m.get(CLASS_HIERARCHY))
        sources.append(_source(m.get(STACK_TRACE)))
        if not paths or not hierarchy or len(paths) != len(hierarchy) or len(paths) < 2:
            scopes.append(None)  # placed at the root below, once it is known
            classes.append(None)
            continue
        stack = list(zip(paths[:-1], hierarchy[:-1]))  # the last entry is the FX node itself
        same = 0
        while same < min(len(open_calls), len(stack)) and open_calls[same][0] == stack[same][0]:
            same += 1
        del open_calls[same:]
        for path, qualified in stack[same:]:
            open_calls.append((path, _call_component(path, qualified, calls, not open_calls)))
            scope = "/".join(c for _, c in open_calls)
            modules.setdefault(_CALL.sub(r"\1", path), (scope, qualified))
        scope = "/".join(c for _, c in open_calls)
        root = root or open_calls[0][1]
        scopes.append(scope)
        classes.append(stack[-1][1])
    scopes = [root if s is None else s for s in scopes]
    return Placement("torch.export", scopes, classes, sources, modules, root)


def _call_component(path: str, qualified: str, calls: dict[str, int], is_root: bool) -> str:
    """``Class[attr]``, ``Class[attr@k]`` for the k-th call, ``Class`` for the root module."""
    cls = short_class(qualified)
    explicit = _CALL.match(path)
    base = explicit.group(1) if explicit else path
    k = int(explicit.group(2)) if explicit else calls.get(base, 0)
    calls[base] = max(calls.get(base, 0), k) + 1
    if is_root and not base:
        return cls
    attr = _component(base.rsplit(".", 1)[-1]) or "?"
    return f"{cls}[{attr}@{k}]" if k else f"{cls}[{attr}]"


def _from_scoped_names(names: list[str]) -> Placement:
    """Scopes of the TorchScript-based exporter, from ``/a/a.0/b/Op`` node names."""
    scopes: list[Optional[str]] = []
    modules: dict[str, tuple[str, Optional[str]]] = {}
    for name in names:
        if not name.startswith("/"):
            scopes.append(None)
            continue
        parts = [p for p in name.split("/")[1:-1] if p]
        path, cut = "", []  # the module path, rebuilt: "layer1", "layer1.0" -> "layer1.0"
        for i, part in enumerate(parts):
            if i and part.startswith(parts[i - 1] + "."):  # the parent's name repeated
                path = path[: len(path) - len(parts[i - 1])] + part
            else:
                path = f"{path}.{part}" if path else part
            cut.append(_component(part.rsplit(".", 1)[-1]) or "?")
            modules.setdefault(path, ("/".join(cut), None))
        scopes.append("/".join(cut))
    n = len(names)
    return Placement("torchscript", scopes, [None] * n, [None] * n, modules, "")
