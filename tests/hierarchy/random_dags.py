"""A hypothesis-drawn DAG for the contraction tests: successor sets over positions 0..n-1."""

from __future__ import annotations

from hypothesis import strategies as st


def draw_dag(data) -> list[set[int]]:
    """2-30 nodes, each with up to 3 predecessors among the earlier ones, then the positions
    shuffled (a position's number need not follow the topological order)."""
    n = data.draw(st.integers(2, 30))
    succ = [set() for _ in range(n)]
    for j in range(1, n):
        for i in data.draw(st.lists(st.integers(0, j - 1), max_size=3, unique=True)):
            succ[i].add(j)
    perm = data.draw(st.permutations(range(n)))
    return [{perm[j] for j in succ[perm.index(k)]} for k in range(n)]
