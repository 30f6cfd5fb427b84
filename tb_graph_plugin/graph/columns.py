"""Two SlimGraph fields kept as numpy columns but read like the Python containers they replace
(``graph.model.SlimGraph``): :class:`OpLists` (a list of op ids per op id, CSR) and
:class:`EmbeddingEdges` (edge rows as four columns). No Python object per op or edge is kept; what
a reader gets (a list, a tuple) is made when it asks.
"""

from __future__ import annotations

import numpy as np

__all__ = ["OpLists", "EmbeddingEdges"]


class OpLists:
    """A list of op ids per op id, as two int64 columns (CSR): op ``i``'s list is
    ``values[starts[i]:starts[i + 1]]``. Reads like the ``{op id: [op ids]}`` dict of the ops whose
    list is not empty (``get``, ``[]``, ``in``, ``items``, ``len``), each list made on demand."""

    __slots__ = ("starts", "values")

    def __init__(self, starts=None, values=None) -> None:
        self.starts: np.ndarray = np.zeros(1, dtype=np.int64) if starts is None else starts
        self.values: np.ndarray = np.zeros(0, dtype=np.int64) if values is None else values

    def get(self, i: int, default=None):
        if not 0 <= i < len(self.starts) - 1:
            return default
        a, b = self.starts[i], self.starts[i + 1]
        return self.values[a:b].tolist() if b > a else default

    def __getitem__(self, i: int) -> list[int]:
        got = self.get(i)
        if got is None:
            raise KeyError(i)
        return got

    def __contains__(self, i) -> bool:
        return 0 <= i < len(self.starts) - 1 and bool(self.starts[i + 1] > self.starts[i])

    def keys(self) -> list[int]:
        return np.flatnonzero(np.diff(self.starts)).tolist()

    def items(self):
        return ((i, self[i]) for i in self.keys())

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self.starts)))

    def __eq__(self, other) -> bool:
        if isinstance(other, OpLists):
            other = dict(other.items())
        return isinstance(other, dict) and dict(self.items()) == other


class EmbeddingEdges:
    """The raw edges with an embedding at one end, as four int64 columns (``src``, ``dst``,
    ``kind``, ``output``; one row per edge, in the order of the GraphDef's inputs). Iterating
    gives ``(src, dst, kind, src_output)`` tuples of Python ints (the info pane reads them so)."""

    __slots__ = ("src", "dst", "kind", "output")

    def __init__(self, src=None, dst=None, kind=None, output=None) -> None:
        empty = np.zeros(0, dtype=np.int64)
        self.src: np.ndarray = empty if src is None else src
        self.dst: np.ndarray = empty if dst is None else dst
        self.kind: np.ndarray = empty if kind is None else kind
        self.output: np.ndarray = empty if output is None else output

    def __len__(self) -> int:
        return len(self.src)

    def __iter__(self):
        return zip(self.src.tolist(), self.dst.tolist(), self.kind.tolist(), self.output.tolist())

    def __eq__(self, other) -> bool:
        return isinstance(other, EmbeddingEdges) and list(self) == list(other)
