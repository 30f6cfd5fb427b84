"""Edge crossing counter, the same for every engine (ours, dot, dagre in the bench).

Purpose: count crossings of drawn edge polylines from geometry only, so results of
different engines are comparable. Method: horizontal scan lines (vertical scan lines for
LR/RL) at every distinct node-centre row and half way between consecutive rows; each
polyline is sampled where it meets each scan line; between two consecutive scan lines two
edges cross iff their left-to-right order flips, which is an inversion count (bilayer
crossing counting, Barth/Juenger/Mutzel, done by a vectorised merge sort).

Pre: polylines of a layered drawing (monotone along the rank axis, as every layered
engine draws them). Post: an exact count for straight segments between scan lines; two
crossings of the same pair between two consecutive scan lines are not seen.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

try:  # scipy's Cython merge-sort discordant-pair counter (private; numpy fallback below)
    from scipy.stats._stats import _kendall_dis
except ImportError:  # pragma: no cover
    _kendall_dis = None

__all__ = ["count_inversions", "count_crossings", "count_result_crossings"]


def count_inversions(values: np.ndarray) -> int:
    """Number of pairs i < j with ``values[i] > values[j]`` (strict), in O(n log^2 n) numpy.

    >>> count_inversions(np.array([3, 1, 2]))
    2
    """
    a = np.asarray(values)
    n = len(a)
    if n < 2:
        return 0
    if _kendall_dis is not None:  # compiled merge sort: pairs discordant with 1..n
        dense = np.unique(a, return_inverse=True)[1].ravel().astype(np.intp) + 1
        return int(_kendall_dis(np.arange(1, n + 1, dtype=np.intp), dense))
    cur = np.unique(a, return_inverse=True)[1].astype(np.int64).ravel()
    idx = np.arange(n, dtype=np.int64)
    big = np.int64(n + 1)
    total = 0
    width = 1
    while width < n:
        block = idx // width
        pair = block >> 1
        right = (block & 1).astype(bool)
        key = pair * big + cur  # pair-major; each block is sorted, so left keys are sorted
        left_keys = key[~right]
        rk = key[right]
        le = np.searchsorted(left_keys, rk, side="right")
        end = np.searchsorted(left_keys, pair[right] * big + (big - 1), side="right")
        total += int((end - le).sum())
        cur = np.sort(key) - (idx // (2 * width)) * big  # merged blocks of size 2*width
        width *= 2
    return total


def count_crossings(
    polylines: Iterable[Sequence[Sequence[float]]],
    rows: Iterable[float],
    vertical: bool = True,
) -> int:
    """Crossings among ``polylines`` given the node-centre coordinates ``rows`` along the rank axis.

    ``vertical``: ranks stacked along y (TB/BT); otherwise along x (LR/RL).
    """
    a = 1 if vertical else 0  # rank axis
    b = 1 - a
    levels = np.unique(np.round(np.asarray(list(rows), dtype=float), 3))
    if len(levels) == 0:
        return 0
    scan = np.concatenate([levels, (levels[:-1] + levels[1:]) / 2.0])
    scan.sort()
    seg_k, seg_xa, seg_xb = [], [], []
    for pts in polylines:
        p = np.asarray(pts, dtype=float)
        if len(p) < 2:
            continue
        t, s = p[:, a], p[:, b]
        if t[-1] < t[0]:
            t, s = t[::-1], s[::-1]
        t = np.maximum.accumulate(t)  # force monotone (spline wiggles)
        # extend both ends along the rank axis to their node rows (ends lie on borders)
        i0 = np.searchsorted(levels, t[0] + 1e-6, side="right") - 1
        i1 = np.searchsorted(levels, t[-1] - 1e-6, side="left")
        t0 = levels[i0] if i0 >= 0 else t[0]
        t1 = levels[i1] if i1 < len(levels) else t[-1]
        lo = np.searchsorted(scan, t0 - 1e-6, side="left")
        hi = np.searchsorted(scan, t1 + 1e-6, side="right")
        if hi - lo < 2:
            continue
        ks = np.arange(lo, hi)
        xs = np.interp(scan[ks], t, s)
        seg_k.append(ks[:-1])
        seg_xa.append(xs[:-1])
        seg_xb.append(xs[1:])
    if not seg_k:
        return 0
    k = np.concatenate(seg_k)
    xa = np.round(np.concatenate(seg_xa), 3)
    xb = np.round(np.concatenate(seg_xb), 3)
    order = np.lexsort((xb, xa, k))
    k, xb = k[order], xb[order]
    # group-major key: inversions only inside one scan-line gap
    rank_b = np.unique(xb, return_inverse=True)[1].astype(np.int64).ravel()
    key = k.astype(np.int64) * np.int64(len(xb) + 1) + rank_b
    return count_inversions(key)


def count_result_crossings(result, rankdir) -> int:
    """Crossings of a :class:`~tb_graph_plugin.layout.model.LayoutResult`."""
    from tb_graph_plugin.layout.model import RankDir

    vertical = RankDir(rankdir).vertical
    rows = [p[1] if vertical else p[0] for p in result.positions.values()]
    return count_crossings(result.edge_points, rows, vertical=vertical)
