"""Where the pieces of a compiled call sit (``compiled.py``, step 3): module paths from Dynamo's
source names, the module a frame belongs to, the order of graphs and breaks, a break's place.

Pure functions over what ``compile_recorder.Recorder`` kept (and Python's own ``inspect``).
"""

from __future__ import annotations

import re
from typing import Optional

import torch

__all__ = ["module_path", "lifted", "class_of", "frame_prefix", "module_classes", "frame_of", "stack_text",
           "break_stack", "events"]


_SOURCE_ATTR = re.compile(r"\._(?:modules|parameters|buffers)\['([^']*)'\]|\.(\w+)|\[(\d+)\]|\['([^']*)'\]")


def module_path(source: str) -> str:
    """``L['self'].layers[0]._modules['fc']`` -> ``layers.0.fc`` (Dynamo's source names).

    >>> module_path("L['self'].layers[0].self_attn"), module_path("L['s']._modules['a']._parameters['weight']")
    ('layers.0.self_attn', 'a.weight')
    """
    m = re.match(r"^[LG]\['[^']*'\](?:\[\d+\])*", source)
    rest = source[m.end():] if m else source
    parts = []
    for match in _SOURCE_ATTR.finditer(rest):
        parts.append(next(g for g in match.groups() if g is not None))
    return ".".join(parts)


def lifted(placeholder: str) -> tuple[str, str]:
    """(``parameters`` / ``buffers`` / "", path) of a Dynamo placeholder's name.

    >>> lifted("L_self_modules_layers_modules_0_modules_self_attn_modules_q_proj_parameters_weight_")
    ('parameters', 'layers.0.self_attn.q_proj.weight')
    >>> lifted("L_x_")
    ('', '')
    """
    parts = re.split(r"_(modules|parameters|buffers)_", placeholder)
    if len(parts) < 3 or parts[-2] not in ("parameters", "buffers"):
        return "", ""
    names = [parts[i + 1] for i in range(1, len(parts) - 1, 2)]
    names[-1] = names[-1][:-1] if names[-1].endswith("_") else names[-1]
    return parts[-2], ".".join(names)


def class_of(fn, path: str) -> str:
    try:
        module = fn.get_submodule(path)
    except (AttributeError, TypeError):
        return "torch.nn.Module"
    return f"{type(module).__module__}.{type(module).__qualname__}"


def frame_prefix(sources: list, example_inputs: list, owned: dict, classes: dict, gm, own: Optional[str]) -> str:
    """The path (``inner.``) of the module a Dynamo frame's ``self`` is within the compiled
    module: ``own`` (the frame's ``self`` found among the model's modules), else a lifted
    parameter's path in the frame (``fc.weight``) against its path in the model
    (``inner.fc.weight``), else the module whose ``forward`` holds the frame's source lines (a
    resumed frame, ``torch_dynamo_resume_in_forward_at_31``, keeps no ``self``): the instance
    last seen of that class, or its one instance. ``classes`` (class -> [(path, forward's
    file, first line, last line)], and the last prefix seen per class) is shared across frames."""
    found = (own + "." if own else "") if own is not None else None
    if found is None:
        for source, value in zip(sources, example_inputs):
            kind, rel = lifted(source)
            full = owned.get(id(value)) if kind else None
            if full and full.endswith(rel):
                found = full[:len(full) - len(rel)]
                break
    where = None
    for node in gm.graph.nodes:
        frames = re.findall(r'File "([^"]*)", line (\d+), in (\S+)', node.meta.get("stack_trace") or "")
        if frames:
            where = (frames[-1][0], int(frames[-1][1]))
            break
    owners = [cls for cls, spans in classes.get("spans", {}).items()
              if where and any(f == where[0] and lo <= where[1] <= hi for f, lo, hi in spans)]
    if found is not None:
        for cls in owners:
            classes.setdefault("last", {})[cls] = found
        return found
    for cls in owners:
        if cls in classes.get("last", {}):
            return classes["last"][cls]
        paths = classes["paths"].get(cls, [])
        if len(paths) == 1:
            return paths[0] + "." if paths[0] else ""
    return ""


def module_classes(fn) -> dict:
    """For :func:`frame_prefix`: each module class of ``fn`` -> the span of lines of its ``forward``,
    and its instances' paths."""
    import inspect

    spans: dict = {}
    paths: dict = {}
    if isinstance(fn, torch.nn.Module):
        for path, module in fn.named_modules():
            cls = type(module)
            paths.setdefault(cls, []).append(path)
            if cls in spans:
                continue
            try:
                lines, first = inspect.getsourcelines(cls.forward)
                spans[cls] = [(inspect.getsourcefile(cls.forward), first, first + len(lines) - 1)]
            except (OSError, TypeError):
                spans[cls] = []
    return {"spans": spans, "paths": paths, "last": {}}


def frame_of(reason) -> tuple[str, str]:
    """(``file.py:7 in forward``, the file) of the innermost user frame of a break: the file from
    the package down (after ``site-packages/``), else relative to the working directory when
    under it, else as recorded."""
    import os

    stack = list(getattr(reason, "user_stack", None) or [])
    if not stack:
        return "", ""
    f = stack[-1]
    short = f.filename.rsplit("site-packages/", 1)[-1]
    if short == f.filename and f.filename.startswith(os.getcwd() + os.sep):
        short = os.path.relpath(f.filename)
    return f"{short}:{f.lineno} in {f.name}", f.filename


_FORWARD_FRAME = re.compile(r'File "[^"\n]*", line \d+, in forward\n[^\n]*')


def up_to_forward(stack_trace: Optional[str]) -> Optional[str]:
    r"""A Dynamo node's stack trace cut after its innermost ``forward`` frame (with that frame's
    line), as ``torch.export`` records it: an op that a library function computes for a module
    (Hugging Face's ``create_causal_mask`` and the mask helpers it calls) is then placed on the
    line of the module's ``forward`` that called it, and ``ingest`` groups such ops as that
    call (``create_causal_mask()``) as it does an exported model's. No ``forward`` frame: as is.

    >>> up_to_forward('File "m.py", line 3, in forward\n    y = f(x)\nFile "u.py", line 9, in f\n    return x + 1\n')
    'File "m.py", line 3, in forward\n    y = f(x)'
    """
    if not stack_trace:
        return stack_trace
    last = None
    for last in _FORWARD_FRAME.finditer(stack_trace):
        pass
    return stack_trace if last is None else stack_trace[:last.end()]


def stack_text(reason) -> str:
    stack = list(getattr(reason, "user_stack", None) or [])
    return "\n".join(f'  File "{f.filename}", line {f.lineno}, in {f.name}\n    {(f.line or "").strip()}' for f in stack)


def break_stack(agm, reason, classes: dict, fn, root_module: str) -> str:
    """The serialized ``nn_module_stack`` of the module call whose ``forward`` broke: the module
    class whose ``forward`` holds the break's line (``classes``: :func:`module_classes`), in the
    call of it the last op before the break ran in (``agm``, the graph before the break, if
    any), else its instance last seen or its one instance; else ""."""
    stack = list(getattr(reason, "user_stack", None) or [])
    if not stack:
        return ""
    f = stack[-1]
    owners = {f"{cls.__module__}.{cls.__qualname__}": cls for cls, spans in classes.get("spans", {}).items()
              if any(file == f.filename and lo <= f.lineno <= hi for file, lo, hi in spans)}
    if not owners:
        return ""
    found = None
    for node in agm.graph.nodes if agm is not None else ():
        entries = list((node.meta.get("nn_module_stack") or {}).items())
        for i, (_key, (_path, qual)) in enumerate(entries):
            if qual in owners:
                found = entries[:i + 1]  # this op ran inside a call of the module that broke
    if found is None:
        cls = next(iter(owners.values()))
        prefix = classes.get("last", {}).get(cls)
        paths = classes.get("paths", {}).get(cls, [])
        path = prefix[:-1] if prefix else (paths[0] if len(paths) == 1 else None)
        if path is None:
            return ""
        levels = path.split(".") if path else []
        found = [("L__self__", ("", root_module))] + [
            ("L__self__" + ".".join(levels[:i + 1]), (".".join(levels[:i + 1]), class_of(fn, ".".join(levels[:i + 1]))))
            for i in range(len(levels))]
    return ";".join(f"{k},{p},{c}" for k, (p, c) in found)


def events(recorder, reasons: list) -> list:
    """Graphs and breaks in run order: ``[("graph", k, recorded), ("break", k, reason)]``.

    A break that ended a graph follows it; a break with no graph of its own (nothing traced
    before it in its frame) sits before the first graph compiled after it (``recorder.seen``:
    how many break reasons existed when each graph was compiled). A break seen again from an
    outer frame (same innermost source line) counts once."""
    own = {id(r[2]): k for k, r in enumerate(recorder.graphs) if r[2] is not None}
    distinct, lines = [], set()
    for j, r in enumerate(reasons):
        stack = list(getattr(r, "user_stack", None) or [])
        line = (stack[-1].filename, stack[-1].lineno, stack[-1].name) if stack else None
        if id(r) not in own and line in lines:
            continue
        if id(r) not in own and any(id(o) in own and _line(o) == line for o in reasons[j + 1:]):
            continue  # seen from the outer frame first; the inner frame's graph owns it
        lines.add(line)
        distinct.append((j, r))
    events = []
    for k, recorded in enumerate(recorder.graphs):
        for j, r in distinct:
            if id(r) not in own and j < recorder.seen[k] and not any(e[2] is r for e in events):
                events.append(("break", k, r))
        events.append(("graph", k, recorded))
        for j, r in distinct:
            if own.get(id(r)) == k:
                events.append(("break", k, r))
    for j, r in distinct:
        if not any(e[2] is r for e in events):
            events.append(("break", len(recorder.graphs), r))
    return events


def _line(reason):
    stack = list(getattr(reason, "user_stack", None) or [])
    return (stack[-1].filename, stack[-1].lineno, stack[-1].name) if stack else None
