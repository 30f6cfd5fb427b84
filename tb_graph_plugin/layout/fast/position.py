"""Coordinate assignment inside each component: rows along the rank axis, a priority-style
least-squares placement across it.

Rank axis: each (component, layer) row is as tall as its tallest node, rows are
``ranksep`` apart, node centres sit on the row's centre line ([HCG-LAYOUT] 坐标计算:
equal-height bands per depth).

Across the ranks: the "priority method" family ([SUG81]; [DOT93]
weights 1/2/8 for real-real / real-dummy / dummy-dummy edges, so long edges run straight):
alternating downward and upward passes move every node to the weighted mean of its
neighbours in the previous layer, subject to the order and minimum gaps of its row. Each
pass is one weighted isotonic regression (pool-adjacent-violators [PAV55], ``scipy``) over all rows
of all components at once: row ``i`` is shifted by ``i * G`` with ``G`` larger than any
coordinate, so no pool crosses a row boundary and the rows stay independent.

Pre: ``pos`` set (order). Post: in every row, nodes follow ``pos`` and neighbours are at
least ``(across_a + across_b)/2 + gap`` apart (gap ``nodesep`` between real nodes,
``edgesep`` between dummies, the mean for a mix); ``layer[u] < layer[v]`` implies
``y[u] < y[v]``; coordinates are component-local (each component starts at y = 0).
"""

from __future__ import annotations

import numpy as np

from tb_graph_plugin.layout.fast.state import LayeredGraph

__all__ = ["assign_coordinates"]


def _rows(g: LayeredGraph) -> None:
    o = g.options
    n_layers = int(g.layer.max()) + 1
    key = g.comp * n_layers + g.layer
    uk, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    height = np.zeros(len(uk))
    np.maximum.at(height, inv, g.along)
    row_comp = uk // n_layers
    step = height + o.ranksep
    cs = np.cumsum(step) - step  # exclusive prefix sum
    comp_start = np.searchsorted(row_comp, row_comp, side="left")
    top = cs - cs[comp_start]
    g.row_top = top[inv]
    g.row_bottom = (top + height)[inv]
    g.y = (top + height / 2.0)[inv]


def assign_coordinates(g: LayeredGraph) -> None:
    # imported on first use (~0.35 s): a first view laid out by dot alone need not wait for it;
    # an idle worker imports it after its first imports (``tasks.LATE_IMPORTS``)
    from scipy.optimize import isotonic_regression

    o = g.options
    n = g.n
    _rows(g)
    if n == 0:
        g.x = np.zeros(0)
        return
    seq = np.lexsort((g.pos, g.layer, g.comp))
    lay, cmp_ = g.layer[seq], g.comp[seq]
    new_row = np.ones(n, dtype=bool)
    new_row[1:] = (lay[1:] != lay[:-1]) | (cmp_[1:] != cmp_[:-1])
    row_id = np.cumsum(new_row) - 1
    dummy = seq >= g.n_real
    half = g.across[seq] / 2.0
    gap = np.where(dummy[1:] & dummy[:-1], o.edgesep, np.where(dummy[1:] | dummy[:-1], (o.nodesep + o.edgesep) / 2.0, o.nodesep))
    sep = np.zeros(n)
    sep[1:] = half[1:] + half[:-1] + gap
    sep[new_row] = 0.0
    cs = np.cumsum(sep)
    row_start = np.flatnonzero(new_row)
    off = cs - cs[row_start][row_id]
    x_seq = off.copy()

    # edge pull weights (Gansner omega) on unit edges, in sequence indices
    where = np.empty(n, dtype=np.int64)
    where[seq] = np.arange(n)
    u, v = where[g.usrc], where[g.udst]
    du, dv = dummy[u], dummy[v]
    omega = np.where(du & dv, 8.0, np.where(du | dv, 2.0, 1.0)) * (g.uweight + 1e-3)

    def solve(x_cur, ends, others):
        num = np.bincount(ends, weights=omega * x_cur[others], minlength=n)
        den = np.bincount(ends, weights=omega, minlength=n)
        free = den == 0
        d = np.where(free, x_cur, num / np.where(free, 1.0, den))
        w = np.where(free, 1e-3, den)
        z = d - off
        span = float(np.abs(z).max()) * 2.0 + 1.0
        shift = row_id * span
        y = isotonic_regression(z + shift, weights=w).x - shift
        return y + off

    both_ends = np.concatenate([u, v])
    both_others = np.concatenate([v, u])
    omega_both = np.concatenate([omega, omega])
    for _ in range(o.position_iterations):
        x_seq = solve(x_seq, v, u)  # down: follow predecessors
        x_seq = solve(x_seq, u, v)  # up: follow successors
    omega = omega_both
    x_seq = solve(x_seq, both_ends, both_others)
    x = np.empty(n)
    x[seq] = x_seq
    g.x = x
