"""Hierarchy phase 2 (optional): infer scopes from name tokens.

Keras 3 names nest only ``model/layer``; stage and block live in underscores
(``resnet50_1/conv2_block1_2_bn_1``), so a ResNet50's 176 layers are siblings. This phase
recovers the missing levels from shared token prefixes, ours (no reference document):

* a child label is split on ``_``; every strict prefix ending in an *indexed word* token
  (letters then digits: ``conv2``, ``block1``, ``stage3``) is a candidate scope, so
  ``conv2_block1_2_bn_1`` proposes ``conv2`` and ``conv2_block1``;
* a candidate becomes a group when at least ``infer_min_group`` siblings propose it, it
  does not hold every sibling, and it differs from its enclosing candidate's members;
* each child moves into its deepest kept candidate; inferred groups are named
  ``parent/prefix`` (``/*`` appended on a name clash) and flagged ``inferred``.

Automatic mode (``infer_scopes=None``) applies it to a group with at least
``infer_min_siblings`` children when it at least halves the number of direct children.

Pre-condition: phase 1 done (scopes); no series yet.
Post-condition: the set of ops under every original group is unchanged (inferred groups
only insert levels); member names are unchanged; every inferred group has >= 2 children.
"""

from __future__ import annotations

import re

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.hierarchy.scopes import add_group

__all__ = ["infer_scopes", "candidate_prefixes"]

_INDEXED_WORD = re.compile(r"^[A-Za-z]+\d+$")


def candidate_prefixes(label: str) -> list[str]:
    """``"conv2_block1_2_bn_1"`` -> ``["conv2", "conv2_block1"]``."""
    tokens = label.split("_")
    out = []
    for k in range(len(tokens) - 1):
        if _INDEXED_WORD.match(tokens[k]):
            out.append("_".join(tokens[: k + 1]))
    return out


def infer_scopes(h: Hierarchy) -> int:
    """Insert inferred groups; return how many were created."""
    opts = h.options
    if opts.infer_scopes is False:
        return 0
    created = 0
    prefixes: dict[str, list[str]] = {}  # label -> candidate_prefixes(label), labels repeat
    for gid in [g.id for g in h.groups]:  # snapshot: new groups are not revisited
        g = h.groups[gid - h.n_ops]
        if opts.infer_scopes is None and len(g.children) < opts.infer_min_siblings:
            continue
        created += _infer_in_group(h, g, opts.infer_scopes is None, prefixes)
    h.inferred_scopes = created > 0
    return created


def _chains(h: Hierarchy, children: list[int], prefixes: dict[str, list[str]]) -> list[list[str]]:
    n, names, groups = h.n_ops, h.slim.names, h.groups
    chains = []
    for c in children:
        if c < n:
            name = names[c]
            label = name[name.rfind("/") + 1:]
        else:
            label = groups[c - n].label
        chain = prefixes.get(label)
        if chain is None:
            chain = prefixes[label] = candidate_prefixes(label) if "_" in label else []
        chains.append(chain)
    return chains


def _infer_in_group(h: Hierarchy, g, auto: bool, prefixes: dict[str, list[str]]) -> int:
    opts = h.options
    children = g.children
    chains = _chains(h, children, prefixes)
    members: dict[str, int] = {}
    for chain in chains:
        for p in chain:
            members[p] = members.get(p, 0) + 1
    total = len(children)
    kept = set()
    for chain in chains:
        prev = total
        for p in chain:
            m = members[p]
            if opts.infer_min_group <= m < total and m != prev:
                kept.add(p)
                prev = m
    if not kept:
        return 0
    # Deepest kept candidate of each child, and the kept chain above it.
    placement = []
    for chain in chains:
        placement.append([p for p in chain if p in kept])
    tops = set()
    for chain in placement:
        if chain:
            tops.add(chain[0])
    n_direct = len(tops) + sum(1 for chain in placement if not chain)
    if auto and n_direct * 2 > total:
        return 0
    made: dict[str, object] = {}
    new_children: list[int] = []
    base = "" if g.parent < 0 else g.name + "/"
    count = 0
    for c, chain in zip(children, placement):
        holder_children = new_children
        parent = g
        for p in chain:
            sub = made.get(p)
            if sub is None:
                name = base + p
                while name in h.group_index or name in h.slim.index:
                    name += "/*"
                sub = add_group(h, name, p, parent.id, inferred=True)
                made[p] = sub
                holder_children.append(sub.id)
                count += 1
            parent = sub
            holder_children = sub.children
        holder_children.append(c)
        h.set_parent(c, parent.id)
    g.children = new_children
    return count
