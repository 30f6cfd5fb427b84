"""Hierarchy phase 2's reading of names: which siblings a layer name proposes to group.

``infer.infer_scopes`` recovers the levels Keras 3 and other frameworks write into layer names
(``conv2_block1_2_bn``: stage ``conv2``, block ``conv2_block1``); this module only reads the
names (ours; no reference document), the phase decides what becomes a group:

* a child label is split on ``_`` and ``.``; an *index token* is a number (``layer_3_x``,
  ``encoder.layer.3.x``, ``h.3``), a word ending in a number with at most one letter of
  sub-index (``conv2``, ``block1a``, ``mixed5``, ``Conv1``; a lettered one also proposes its
  stage, ``block2`` for ``block2a``, kept when the siblings show two letters) or a bracketed index
  (``Layer[3]``). Every prefix ending in an index token is a *candidate*:
  ``stage_0_block_2_conv`` proposes ``stage_0`` and ``stage_0_block_2``; ``mixed9``
  proposes itself (the layer that names a block belongs to it);
* the first instance of a repeated block, which Keras names without its index
  (``expanded_conv_depthwise`` beside ``expanded_conv_1_depthwise``), is proposed as block
  ``expanded_conv`` of family ``expanded_conv_#`` when a numbered block has a layer of the same
  name, and so is a first block named with another prefix whose layers are all layers of one
  family (MobileNetV2's ``expanded_conv_depthwise`` .. beside ``block_1_depthwise`` ..);
* a trailing uniquifier that most labels of the group share (Keras 3 traces call every
  layer scope ``<layer>_1``) is ignored first;
* a candidate is kept when ``infer_min_group`` <= its members < all children, it differs
  from its enclosing candidate, and its *family* (the candidate with every index replaced
  by ``#``: ``stage_#_block_#``) has at least two kept candidates: an index that never
  varies (``conv2d`` in ``conv2d_17``) is not an index.

The layers are a group's group children (Keras 3 layer scopes, PyTorch modules), and in a Keras
*conceptual* graph its ops: ``ingest.keras_model`` writes each layer as a node of no op type
(``LAYER_OP``; its class in attr ``keras_class``), the model's names as an op graph's layer scopes
are (``densenet121/conv2_block1_0_bn``).

Pre-condition: labels are the layers' (``None`` for another op child: ops name no block).
Post-condition of :func:`kept_chains`: each child's kept candidates, outermost first, each a
prefix of its label as read (without the shared uniquifier); an op that is no layer has none.
"""

from __future__ import annotations

import functools
import re
import weakref
from collections import Counter

from tb_graph_plugin.hierarchy.model import Hierarchy

__all__ = ["candidate_prefixes", "kept_chains", "labels_of", "shared_uniquifier", "LAYER_OP", "Layers"]

LAYER_OP = ""
"""The op type of a Keras conceptual graph's nodes, each a layer (module docstring)."""

_HAS_LAYER_OPS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # SlimGraph -> bool


class Layers:
    """Which children of a group are layers: its groups, and ops of type ``LAYER_OP`` where the
    graph has any (looked for once per SlimGraph: a C-level scan, ~1 ms at 141k ops)."""

    def __init__(self, h: Hierarchy) -> None:
        self.n = h.n_ops
        slim = h.slim
        has = _HAS_LAYER_OPS.get(slim)
        if has is None:
            has = _HAS_LAYER_OPS[slim] = LAYER_OP in slim.ops
        self.ops = slim.ops if has else None

    def __call__(self, c: int) -> bool:
        return c >= self.n or (self.ops is not None and self.ops[c] == LAYER_OP)

    def count(self, children: list[int]) -> int:
        if self.ops is None and (not children or max(children) < self.n):
            return 0  # most groups hold ops only
        return sum(map(self, children))

_SPLIT = re.compile(r"([_.])").split
_INDEX = re.compile(r"(?:\d+|[A-Za-z]+\d+[a-z]?|[A-Za-z]*\[\d+\])$").match
_INDEX_VALUE = functools.partial(re.compile(r"\d+[a-z]?(?=$|\])").sub, "#", count=1)
_UNIQUIFIER = re.compile(r"_\d+$")
_HAS_DIGIT = re.compile(r"\d").search
_MIN_NAMED_APART = 3  # labels a first block named apart needs (MobileNetV2's block 0 has 5)


def candidate_prefixes(label: str) -> list[tuple[str, str]]:
    """(prefix, family) pairs, outermost first.

    >>> [p for p, _ in candidate_prefixes("conv2_block1_2_bn")]
    ['conv2', 'conv2_block1', 'conv2_block1_2']
    >>> candidate_prefixes("encoder.layer.3.attention")
    [('encoder.layer.3', 'encoder.layer.#')]
    """
    out = []
    family = ""
    parts = _SPLIT(label)  # tokens at even positions, separators between them
    end = 0
    for i in range(0, len(parts), 2):
        tok = parts[i]
        if _INDEX(tok):
            family += _INDEX_VALUE(tok)
            if tok[-1].isalpha():  # block2a: the stage block2 first (kept only if block2b exists)
                out.append((label[:end + len(tok) - 1], family))
            out.append((label[:end + len(tok)], family))
        else:
            family += tok
        end += len(tok)
        if i + 1 < len(parts):
            family += parts[i + 1]
            end += len(parts[i + 1])
    return out


def shared_uniquifier(labels: list[str]) -> str:
    """The ``_<n>`` suffix at least 3/4 of ``labels`` end with, or ``""``."""
    if len(labels) < 4:
        return ""
    counts = Counter(m.group() for m in map(_UNIQUIFIER.search, labels) if m)
    if not counts:
        return ""
    suffix, count = counts.most_common(1)[0]
    return suffix if count * 4 >= len(labels) * 3 else ""



def labels_of(h: Hierarchy, children: list[int], layers: Layers) -> list:
    """Labels of the layers (``layers``) without their shared uniquifier; None for other ops."""
    n = h.n_ops
    labels = [h.groups[c - n].label if c >= n else (h.leaf_name(c) if layers(c) else None) for c in children]
    suffix = shared_uniquifier([x for x in labels if x is not None])
    if suffix:
        labels = [x[: -len(suffix)] if x is not None and x.endswith(suffix) else x for x in labels]
    return labels


def kept_chains(h: Hierarchy, labels: list[str], memo: dict) -> list[list[str]]:
    """Each child's kept candidates, outermost first (size, nesting and family rules)."""
    opts = h.options
    proposed = []
    for x in labels:
        if x is None:  # an op: never names a block, may be absorbed as glue
            proposed.append([])
            continue
        chain = memo.get(x)
        if chain is None:
            chain = memo[x] = candidate_prefixes(x) if _HAS_DIGIT(x) else []
        proposed.append(chain)
    # A stage proposed by a lettered index (block2 from block2a) stands only when its
    # siblings show two letters (block2a, block2b): conv2d never makes a stage conv2.
    letters: dict[str, set[str]] = {}
    for chain in proposed:
        for (p, _), (q, _) in zip(chain, chain[1:]):
            if len(q) == len(p) + 1 and q.startswith(p) and q[-1].isalpha():
                letters.setdefault(p, set()).add(q[-1])
    stages = {p for p, found in letters.items() if len(found) >= 2}
    proposed = [[(p, f) for p, f in chain if p not in letters or p in stages] for chain in proposed]
    _first_instances(labels, proposed)
    members: Counter = Counter(p for chain in proposed for p, _ in chain)
    total = len(labels)
    sized: dict[str, str] = {}  # prefix -> family, for prefixes passing the size rules
    for chain in proposed:
        prev = total
        for p, fam in chain:
            m = members[p]
            if opts.infer_min_group <= m < total and m != prev:
                sized[p] = fam
                prev = m
    family_size = Counter(sized.values())
    return [[p for p, _ in chain if p in sized and family_size[sized[p]] >= 2] for chain in proposed]


def _first_instances(labels: list, proposed: list[list[tuple[str, str]]]) -> None:
    """Propose the block Keras wrote without its index (in place, outermost first).

    Keras names a repeated block's first instance without the number the others carry: its
    MobileNetV3 source builds block 0 as ``expanded_conv_<layer>`` and block k as
    ``expanded_conv_k_<layer>`` (its default layer names do the same: ``conv``, ``conv_1``).
    A label ``base_rest`` is proposed as a member of block ``base`` (family ``base_#``) when
    some block ``base_k`` holds a layer ``base_k_rest``: the same layer name in the same place.
    """
    rests: dict[str, tuple[str, set[str]]] = {}  # base -> (family, layer names after base_k_)
    for x, chain in zip(labels, proposed):
        for p, fam in chain:
            base, _, index = p.rpartition("_")
            if base and index.isdigit() and fam.endswith("_#") and len(x) > len(p) + 1:
                rests.setdefault(base, (fam, set()))[1].add(x[len(p) + 1:])
    if not rests:
        return
    order = {base: i for i, base in enumerate(rests)}  # the first base found, in this order, wins
    for k, x in enumerate(labels):
        if x is None:
            continue
        best = None
        j = x.find("_")
        while j >= 0:  # each ``base_`` that ``x`` starts with
            base = x[:j]
            if base in rests and (best is None or order[base] < order[best]):
                fam, known = rests[base]
                rest = x[j + 1:]
                if rest in known and not rest[:1].isdigit() and all(f != fam for _, f in proposed[k]):
                    best = base
            j = x.find("_", j + 1)
        if best is not None:
            proposed[k] = [(best, rests[best][0])] + proposed[k]
    _first_blocks_named_apart(labels, proposed, rests)


def _first_blocks_named_apart(labels: list, proposed: list, rests: dict) -> None:
    """Propose the first block Keras names with another prefix (in place).

    MobileNetV2's source names block k ``block_k_<layer>`` but block 0 ``expanded_conv_<layer>``:
    a prefix ``X`` none of whose labels has a candidate, that at least ``_MIN_NAMED_APART``
    labels ``X_<layer>`` share, every one of them a layer name of one family ``base_#``, is
    proposed as a block ``X`` of that family. A prefix with a layer the family lacks is not.
    """
    loose = [k for k, x in enumerate(labels) if x is not None and not proposed[k]]
    by_prefix: dict[str, list[int]] = {}
    for k in loose:
        x = labels[k]
        for j in range(1, len(x)):
            if x[j] == "_":
                by_prefix.setdefault(x[:j], []).append(k)
    for prefix, members in sorted(by_prefix.items(), key=lambda item: -len(item[1])):
        if len(members) < _MIN_NAMED_APART or any(proposed[k] for k in members) or prefix in rests:
            continue
        layers = {labels[k][len(prefix) + 1:] for k in members}
        for fam, known in rests.values():
            if layers <= known:
                for k in members:
                    proposed[k] = [(prefix, fam)]
                break
