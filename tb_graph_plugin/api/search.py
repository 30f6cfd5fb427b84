"""Search over a built graph's names, labels and op types in linear time: [RE2], never a
backtracking engine.

Python's ``re`` backtracks: ``(a+)+$`` against ``'a' * 36 + '!'`` takes ~2^36 steps and held a
worker for the whole job time limit. RE2 (the ``google-re2`` wheel, imported as ``re2``) runs
in time linear in the text for every pattern it accepts, and refuses what it cannot do so
(backreferences, look-around): those patterns answer 400 with RE2's reason.

``search_graph(state, q, op, names_only=False)`` matches the regex ``q`` (``re.search``
semantics: anywhere in the text; case-insensitive, ``(?-i)`` in ``q`` turns case back on)
against every group (when no ``op`` is given) and every op whose op type contains ``op``
(ignoring case). A node is a hit when ``q`` matches its name, its label (what is drawn: a
group's label, an op's ``graph.labels.op_label``: ``add`` for a PyTorch ``aten::add`` named
``816``) or, for an op, its op type; with ``names_only``, its name alone.

Pre-conditions: ``state.hierarchy`` is built and not mutated meanwhile (search only reads it).
Post-conditions: at most ``MAX_SEARCH_HITS`` hits, groups first then ops in SlimGraph order;
``total`` counts every match seen; the call returns within ``budget_s`` plus one check interval
(``_CHECK_EVERY`` names, ~5 ms): past the budget the walk stops and ``complete`` is False.
Cost: one RE2 ``Match`` call per name on pre-encoded UTF-8 names (~0.6 us a name: ~0.6 s at
1M ops, see BENCHMARKS.md), after a one-time encoding of the names kept on the ``GraphState``.
Op types and the labels that differ from the name's last part (PyTorch op-type labels) are few
distinct strings: each is matched once per search. An op's label that is its name's last part
can only match where the name does not when ``q`` anchors at the start (``^``, ``\\A``): only
then is it matched apart (a second ``Match`` per op).
"""

from __future__ import annotations

import time
from typing import Optional

import re2
from re2 import _re2
from tensorboard import errors

from tb_graph_plugin import wire
from tb_graph_plugin.graph.labels import op_label

__all__ = ["MAX_SEARCH_HITS", "MAX_QUERY_CHARS", "SEARCH_BUDGET_S", "compile_query", "search_graph", "search_pattern"]

MAX_SEARCH_HITS = 200
MAX_QUERY_CHARS = 1000
SEARCH_BUDGET_S = 1.0
_CHECK_EVERY = 8192
_NO_MATCH = (-1, -1)
_UNANCHORED = _re2.RE2.Anchor.UNANCHORED


def compile_query(q: str):
    """The RE2 program of ``q``, or ``InvalidArgumentError`` saying why RE2 refuses it.

    >>> compile_query("conv").Match(_UNANCHORED, b"a/Conv1", 0, 7)[0]
    (2, 6)
    """
    if len(q) > MAX_QUERY_CHARS:
        raise errors.InvalidArgumentError(
            f"search regex of {len(q)} characters is longer than the limit of {MAX_QUERY_CHARS}"
        )
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on the worker's stderr
    options.never_capture = True  # only "does it match" is asked: no group offsets to fill
    options.case_sensitive = False  # `(?-i)` in the pattern turns it back on
    program = _re2.RE2(q.encode("utf-8", "surrogatepass"), options)
    if not program.ok():
        reason = program.error().decode("utf-8", "replace")
        raise errors.InvalidArgumentError(
            f"bad search regex {q!r}: {reason} (search uses RE2 syntax, which runs in linear time "
            "and has no backreferences or look-around)"
        ) from None
    return program


class _Names:
    """The graph's names as UTF-8 bytes, encoded once per ``GraphState`` on its first search,
    and the op labels that are not the last part of the op's name (``op_labels``: op id ->
    label, PyTorch ops labelled by their op type)."""

    def __init__(self, hierarchy):
        slim = hierarchy.slim
        self.ops = [n.encode("utf-8", "surrogatepass") for n in slim.names]
        self.op_types = list(slim.ops)
        self.op_types_lower = [t.lower() for t in slim.ops]
        self.distinct_types = sorted(set(slim.ops))
        namespaced = {t for t in self.distinct_types if "::" in t}
        self.op_labels: dict[int, str] = {}
        if namespaced:
            for i, (name, t) in enumerate(zip(slim.names, slim.ops)):
                if t in namespaced:
                    label = op_label(name, t)
                    if label != name[name.rfind("/") + 1:]:
                        self.op_labels[i] = label
        root = hierarchy.root.name
        groups = [g for g in hierarchy.walk_groups() if g.name != root]
        self.groups = [(g.name, g.kind, g.name.encode("utf-8", "surrogatepass"),
                        g.label.encode("utf-8", "surrogatepass") if g.label != g.name else None)
                       for g in groups]


def _names(state) -> _Names:
    names = getattr(state, "search_names", None)
    if names is None:
        names = state.search_names = _Names(state.hierarchy)
    return names


def search_graph(state, q: str, op: Optional[str], budget_s: float = SEARCH_BUDGET_S,
                 names_only: bool = False) -> wire.SearchAnswer:
    """Hits of ``q`` (an RE2 regex, searched anywhere in the name, label or op type; ignoring
    case) and ``op`` (a substring of the op type, ignoring case; groups are only searched without
    it). ``names_only``: ``q`` is matched against names alone. See the module doc."""
    h = state.hierarchy
    match = compile_query(q or "").Match
    op = (op or "").lower() or None
    names = _names(state)
    deadline = time.perf_counter() + budget_s
    hits: list[wire.SearchHit] = []
    total = 0

    def hit(text: bytes) -> bool:
        return match(_UNANCHORED, text, 0, len(text))[0] != _NO_MATCH

    if op is None:
        for i, (name, kind, encoded, label) in enumerate(names.groups):
            if i % _CHECK_EVERY == 0 and i and time.perf_counter() > deadline:
                return wire.SearchAnswer(hits=hits, total=total, complete=False)
            if hit(encoded) or (not names_only and label is not None and hit(label)):
                total += 1
                if len(hits) < MAX_SEARCH_HITS:
                    gid = h.id_of(name)
                    hits.append(wire.SearchHit(name=name, op=None, kind=kind, ancestors=_ancestor_names(h, gid),
                                               label=h.label(gid)))
    ops, types, lower = names.ops, names.op_types, names.op_types_lower
    type_hits: dict[str, bool] = {}
    label_hits: dict[str, bool] = {}
    op_labels: dict[int, str] = {}
    leaves = False
    if not names_only:
        type_hits = {t: hit(t.encode("utf-8", "surrogatepass")) for t in names.distinct_types}
        label_hits = {t: hit(t.encode("utf-8", "surrogatepass")) for t in set(names.op_labels.values())}
        op_labels = names.op_labels
        leaves = "^" in (q or "") or "\\A" in (q or "")  # else a leaf matches only where its name does
    for start in range(0, len(ops), _CHECK_EVERY):
        if start and time.perf_counter() > deadline:
            return wire.SearchAnswer(hits=hits, total=total, complete=False)
        for i in range(start, min(start + _CHECK_EVERY, len(ops))):
            if op is not None and op not in lower[i]:
                continue
            encoded = ops[i]
            if names_only:
                found = hit(encoded)
            else:
                label = op_labels.get(i)
                found = (type_hits[types[i]] or (label_hits[label] if label is not None else
                                                 leaves and hit(encoded[encoded.rfind(b"/") + 1:]))
                         or hit(encoded))
            if found:
                total += 1
                if len(hits) < MAX_SEARCH_HITS:
                    hits.append(wire.SearchHit(name=h.slim.names[i], op=types[i], kind=h.kind(i),
                                               ancestors=_ancestor_names(h, i), label=h.label(i)))
    return wire.SearchAnswer(hits=hits, total=total, complete=True)


def search_pattern(state, pattern: str) -> wire.SearchAnswer:
    """The matches of ``pattern`` (``graph.pattern``: ``A -> * -> B``): one hit per match, its last
    op; ``matches`` the ops of each (the first ``MAX_SEARCH_HITS``); ``match_groups`` the groups
    holding any of them; ``total`` every match; ``complete`` always (the matching is exhaustive, in
    ``O(steps x gap x edges)``). A pattern that cannot be read is ``InvalidArgumentError`` (400)."""
    from tb_graph_plugin.graph.pattern import PatternError, find_pattern

    h = state.hierarchy
    try:
        found = find_pattern(h.slim, pattern, limit=MAX_SEARCH_HITS)
    except PatternError as e:
        raise errors.InvalidArgumentError(f"bad pattern {pattern!r}: {e}") from None
    names = h.slim.names
    hits, matches, groups = [], [], {}
    for path in found.matches:
        last = path[-1]
        hits.append(wire.SearchHit(name=names[last], op=h.slim.ops[last], kind=h.kind(last),
                                   ancestors=_ancestor_names(h, last), label=h.label(last)))
        matches.append([names[i] for i in path])
        for i in path:
            for g in h.ancestors(i)[:-1]:
                groups.setdefault(g, None)
    return wire.SearchAnswer(hits=hits, total=found.total, complete=True, matches=matches,
                             match_groups=[h.name_of(g) for g in groups])


def _ancestor_names(h, ref) -> list[str]:
    """Names of the groups holding ``ref``, outermost first, without the root: what a client
    expands to show it (names can lie about this: inferred scopes, wide-group splits)."""
    return [h.name_of(g) for g in reversed(h.ancestors(ref)[:-1])]  # [-1] is the root
