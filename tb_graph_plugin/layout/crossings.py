"""Edge crossing counter, the same for every engine (ours, dot, dagre in the bench).

Purpose: count crossings of drawn edge polylines from geometry only, so results of
different engines are comparable. Method: horizontal scan lines (vertical scan lines for
LR/RL) at every distinct node-centre row and half way between consecutive rows; each
polyline is sampled where it meets each scan line; between two consecutive scan lines two
edges cross iff their left-to-right order flips, which is an inversion count (bilayer
crossing counting, [BJM04] in docs/references.md, done by a vectorised merge sort).

Pre: polylines of a layered drawing (monotone along the rank axis, as every layered
engine draws them). Post: an exact count for straight segments between scan lines; two
crossings of the same pair between two consecutive scan lines are not seen.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

_COMPILED_MIN = 4096  # below this many values the numpy merge sort is as fast (measured: 0.5 ms at 1k)
_kendall_dis = None  # scipy's Cython discordant-pair counter, imported on first use (see below)


def _compiled_counter():
    """scipy's merge-sort discordant-pair counter (private; None without it). Imported only when
    a count is big enough to need it: ``scipy.stats`` costs ~0.4 s to import, which a worker's
    first layout would otherwise wait for, and bilayer counts of a group's layout are small."""
    global _kendall_dis
    if _kendall_dis is None:
        try:
            from scipy.stats._stats import _kendall_dis as counter
        except ImportError:  # pragma: no cover
            counter = False
        _kendall_dis = counter
    return _kendall_dis or None

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
    counter = _compiled_counter() if n >= _COMPILED_MIN else None
    if counter is not None:  # compiled merge sort: pairs discordant with 1..n
        dense = np.unique(a, return_inverse=True)[1].ravel().astype(np.intp) + 1
        return int(counter(np.arange(1, n + 1, dtype=np.intp), dense))
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

    ``vertical``: ranks stacked along y (TB/BT); otherwise along x (LR/RL). Vectorised over
    all polylines at once.
    """
    a = 1 if vertical else 0  # rank axis
    levels = np.unique(np.round(np.asarray(list(rows), dtype=float), 3))
    lines = [p for p in polylines if len(p) >= 2]
    if len(levels) == 0 or len(lines) < 2:
        return 0
    scan = np.concatenate([levels, (levels[:-1] + levels[1:]) / 2.0])
    scan.sort()
    lens = np.fromiter((len(p) for p in lines), dtype=np.int64, count=len(lines))
    pts = np.asarray([q for p in lines for q in p], dtype=float).reshape(-1, 2)
    t, s = pts[:, a].copy(), pts[:, 1 - a].copy()
    m = len(lines)
    ptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    e = np.repeat(np.arange(m), lens)
    # orient every polyline along increasing t, then force it monotone (spline wiggles)
    flip = t[ptr[1:] - 1] < t[ptr[:-1]]
    idx = np.arange(len(t))
    perm = np.where(flip[e], ptr[e] + ptr[e + 1] - 1 - idx, idx)
    t, s = t[perm], s[perm]
    span = float(np.abs(t).max()) * 4.0 + 1.0
    t = np.maximum.accumulate(t + e * span) - e * span
    # extend both ends along the rank axis to their node rows (ends lie on box borders)
    t0, t1 = t[ptr[:-1]], t[ptr[1:] - 1]
    i0 = np.searchsorted(levels, t0 + 1e-6, side="right") - 1
    i1 = np.searchsorted(levels, t1 - 1e-6, side="left")
    t0e = np.where(i0 >= 0, levels[np.maximum(i0, 0)], t0)
    t1e = np.where(i1 < len(levels), levels[np.minimum(i1, len(levels) - 1)], t1)
    t = np.insert(t, ptr[1:], t1e)
    s = np.insert(s, ptr[1:], s[ptr[1:] - 1])
    ptr2 = ptr + np.arange(m + 1)
    t = np.insert(t, ptr2[:-1], t0e)
    s = np.insert(s, ptr2[:-1], s[ptr2[:-1]])
    ptr3 = ptr2 + np.arange(m + 1)
    e = np.repeat(np.arange(m), lens + 2)
    # segments i -> i+1 inside one polyline; each samples the scan lines in [t_i, t_i+1)
    last = ptr3[1:] - 1
    seg = np.ones(len(t), dtype=bool)
    seg[last] = False
    si = np.flatnonzero(seg)
    ta, tb, sa, sb = t[si], t[si + 1], s[si], s[si + 1]
    is_last = np.zeros(len(t), dtype=bool)
    is_last[last - 1] = True
    lo = np.searchsorted(scan, ta - 1e-6, side="left")
    hi = np.where(is_last[si], np.searchsorted(scan, tb + 1e-6, side="right"), np.searchsorted(scan, tb - 1e-6, side="left"))
    cnt = np.maximum(hi - lo, 0)
    rep = np.repeat(np.arange(len(si)), cnt)
    k = np.arange(int(cnt.sum())) - np.repeat(np.cumsum(cnt) - cnt, cnt) + lo[rep]
    dt = tb - ta
    frac = np.where(dt[rep] > 0, (scan[k] - ta[rep]) / np.where(dt[rep] > 0, dt[rep], 1.0), 0.0)
    x = sa[rep] + frac * (sb[rep] - sa[rep])
    edge = e[si][rep]
    # consecutive samples of one edge on consecutive scan lines form one gap crossing
    pair = (edge[1:] == edge[:-1]) & (k[1:] == k[:-1] + 1)
    xr = np.round(x, 3)
    # a tie at the start of a gap is broken by the order in the previous gap (the side the
    # edge came from), so a crossing exactly on a scan line is counted once, in the next gap
    prev_ok = np.zeros(len(x), dtype=bool)
    prev_ok[1:] = pair
    xprev = np.where(prev_ok[:-1], np.concatenate([[0.0], xr[:-2]]), xr[1:])
    kk = k[:-1][pair]
    xa = xr[:-1][pair]
    xb = xr[1:][pair]
    xp = xprev[pair]
    if len(kk) < 2:
        return 0
    order = np.lexsort((xb, xp, xa, kk))
    kk, xb = kk[order], xb[order]
    # group-major key: inversions only inside one scan-line gap
    rank_b = np.unique(xb, return_inverse=True)[1].astype(np.int64).ravel()
    key = kk.astype(np.int64) * np.int64(len(xb) + 1) + rank_b
    return count_inversions(key)


def count_result_crossings(result, rankdir) -> int:
    """Crossings of a :class:`~tb_graph_plugin.layout.model.LayoutResult`."""
    from tb_graph_plugin.layout.model import RankDir

    vertical = RankDir(rankdir).vertical
    rows = [p[1] if vertical else p[0] for p in result.positions.values()]
    return count_crossings(result.edge_points, rows, vertical=vertical)
