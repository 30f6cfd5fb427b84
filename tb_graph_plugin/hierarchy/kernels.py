"""Hierarchy phase 1a (``HierarchyOptions.group_kernels``): the ops one fused kernel computes,
grouped within each group that holds them.

What ``tb_graph_plugin.torch.add_compiled_graph`` writes (issue 41): an op that Inductor fused
into a kernel carries the attr ``_kernel`` (the kernel's name, ``cpp_fused_add_relu_0``, as
Inductor's provenance tracking reports it; the SlimGraph's ``kernels`` column). With the option on, each group's op children that
share a ``_kernel`` value, two or more of them but not every child of the group, become one group labelled by the kernel name,
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
