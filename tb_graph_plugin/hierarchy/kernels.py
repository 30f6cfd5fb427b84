"""Hierarchy phase 1a (``HierarchyOptions.group_kernels``): the ops one fused kernel computes,
grouped within each group that holds them.

What ``tb_graph_plugin.torch.add_compiled_graph`` writes (issue 41): an op that Inductor fused
into a kernel carries the attr ``_kernel`` (the kernel's name, ``cpp_fused_add_relu_0``, as
Inductor's provenance tracking reports it; the SlimGraph's ``kernels`` column). With the option on, each group's op children that
share a ``_kernel`` value, two or more of them but not every child of the group, and not closing a
cycle through a sibling once gathered (``_acyclic``), become one group labelled by the kernel name,
inferred ``"kernel"``, in the place of the first of them; the module tree stays as it was (a
kernel that fused ops of two module calls is one group in each: the module calls are what the
author wrote, the kernel what ran).

Pre: ``scopes.build_scopes`` ran (every op placed in its scope's group), no other phase yet.
Post: every group's children keep their order but for the kernels' members, gathered; each new
group's name is its parent's name + ``/`` + the kernel name (``*`` appended while taken).
Returns the number of groups made.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.scopes import add_group

__all__ = ["group_kernels"]


def group_kernels(h: Hierarchy) -> int:
    """Group each group's ops by their ``_kernel`` (module docstring)."""
    slim, n = h.slim, h.n_ops
    of_op = slim.kernels
    if not any(of_op):
        return 0
    made = 0
    succ: dict[int, list[int]] = {}
    for a, b in zip(slim.edge_src.tolist(), slim.edge_dst.tolist()):
        succ.setdefault(a, []).append(b)
    for g in list(h.groups):
        ops = [c for c in g.children if c < n]
        if len(ops) < 2:
            continue
        kernel = {c: of_op[c] for c in ops}
        counts: dict[str, int] = {}
        for k in kernel.values():
            if k:
                counts[k] = counts.get(k, 0) + 1
        # a kernel that computes every child of the group is the group itself: no level added
        shared = {k for k, count in counts.items() if count >= 2 and count < len(g.children)}
        if shared:
            shared = _acyclic(h, g, kernel, shared, succ)
        if not shared:
            continue
        base = "" if g.parent < 0 else g.name + "/"
        groups: dict[str, object] = {}
        children: list[int] = []
        for c in g.children:
            k = kernel.get(c, "")
            if k not in shared:
                children.append(c)
                continue
            sub = groups.get(k)
            if sub is None:
                name = base + k
                while name in h.group_index or name in slim.index:
                    name += "*"
                sub = groups[k] = add_group(h, name, k, g.id, inferred="kernel")
                children.append(sub.id)
                made += 1
            sub.children.append(c)
            h.set_parent(c, sub.id)
        g.children = children
    return made


def _acyclic(h: Hierarchy, g, kernel: dict, shared: set, succ: dict) -> set:
    """The kernels of ``shared`` whose ops, gathered into one box among ``g``'s children, close
    no cycle through a sibling (a kernel that fused ops before and after a module call, GPT-2's
    position ids and its ``wpe`` embedding's sum: the box would feed the module and read it back,
    an edge drawn reversed); those stay ops."""
    n = h.n_ops
    holder: dict[int, int] = {}  # every op under g -> the child of g holding it
    for c in g.children:
        stack = [c]
        while stack:
            x = stack.pop()
            if x < n:
                holder[x] = c
            else:
                stack.extend(h.groups[x - n].children)
    child_succ: dict[int, set] = {}
    for a, c in holder.items():
        for b in succ.get(a, ()):
            d = holder.get(b)
            if d is not None and d != c:
                child_succ.setdefault(c, set()).add(d)
    kept = set()
    for k in shared:
        members = {c for c, v in kernel.items() if v == k}
        # a path leaving the members and coming back to them: a cycle once they are one box
        seen, stack = set(), [d for c in members for d in child_succ.get(c, ()) if d not in members]
        back = False
        while stack and not back:
            x = stack.pop()
            if x in seen:
                continue
            seen.add(x)
            for d in child_succ.get(x, ()):
                if d in members:
                    back = True
                    break
                stack.append(d)
        if not back:
            kept.add(k)
    return kept
