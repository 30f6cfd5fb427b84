"""Hierarchy phase 3's reading of names: a group's op children clustered by the stock rule.

The stock dashboard ([TB-SRC] ``hierarchy.ts``, "Detect series") clusters a group's op
children by op and by the leaf name ``^(\\D*)(\\d+)$``: ``add_1 .. add_N`` share the key
(``AddV2``, ``add_``); a bare ``add`` may be their index 0. ``series.detect_op_series`` turns
the clusters into runs and SeriesNodes; this module only reads names.

Pre-condition: ``names``/``ops`` are ``SlimGraph.names``/``.ops``; ``op_children`` op ids.
Post-condition: both functions return the same clusters (up to the order of a cluster's
items) and the same bare keys a cluster can have; tests/hierarchy/test_op_clusters.py
checks it on random names.
"""

from __future__ import annotations

import re

__all__ = ["op_clusters", "op_clusters_by_regex"]

_OP_SERIES = re.compile(r"(\D*)(\d+)$")  # matched from the leaf's start (``match(name, pos)``)
_DIGIT = re.compile(r"\d")
_ASCII_DIGITS = "0123456789"


def op_clusters(names: list[str], ops: list[str], op_children: list[int]):
    """The stock clustering of a group's op children: ``({(op, prefix): [(index, child)]},
    {(op, leaf + "_"): child})``, the first for leaf names ``^(\\D*)(\\d+)$`` (keys in order of
    first member, items in no set order: the caller sorts them), the second for the others
    (the last one wins; the fast path leaves out a leaf with a digit before its last digits,
    whose key no cluster can have).

    An ASCII group without newlines (\\d is [0-9], $ is the end) is clustered in one pass by
    ``rstrip`` of the digits, keyed by (op, stripped name), and the few keys are then cut to
    their leaf (a prefix with a digit matches nothing; keys with one leaf prefix merge, in the
    same first-member order); other groups match each leaf with the regex. O(children).
    """
    text = "".join([names[c] for c in op_children])
    if not text.isascii() or "\n" in text:
        return op_clusters_by_regex(names, ops, op_children)
    stems: dict[tuple[str, str], list[int]] = {}
    bare: dict[tuple[str, str], int] = {}
    for c in op_children:
        name = names[c]
        stem = name.rstrip(_ASCII_DIGITS)
        if len(stem) == len(name):
            bare[(ops[c], name[name.rfind("/") + 1:] + "_")] = c
        else:
            stems.setdefault((ops[c], stem), []).append(c)
    clusters: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for (op, stem), members in stems.items():
        prefix = stem[stem.rfind("/") + 1:]
        if _DIGIT.search(prefix):
            continue  # conv2d_1: a digit before the last run, not a stock series name
        cut = len(stem)
        clusters.setdefault((op, prefix), []).extend([(int(names[c][cut:]), c) for c in members])
    return clusters, bare


def op_clusters_by_regex(names: list[str], ops: list[str], op_children: list[int]):
    """``op_clusters`` by the stock regex on each leaf (any names); O(children)."""
    match = _OP_SERIES.match
    clusters: dict[tuple[str, str], list[tuple[int, int]]] = {}
    bare: dict[tuple[str, str], int] = {}
    for c in op_children:
        name = names[c]
        m = match(name, name.rfind("/") + 1)
        if m:
            clusters.setdefault((ops[c], m[1]), []).append((int(m[2]), c))
        else:
            bare[(ops[c], name[name.rfind("/") + 1:] + "_")] = c
    return clusters, bare
