"""The crossing counter, the same for every engine."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings, strategies as st

from tb_graph_plugin.layout import crossings
from tb_graph_plugin.layout.crossings import count_crossings, count_inversions


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 20), max_size=60))
def test_inversions_match_brute_force(values):
    brute = sum(1 for i, j in itertools.combinations(range(len(values)), 2) if values[i] > values[j])
    assert count_inversions(np.array(values)) == brute


def test_the_compiled_counter_of_big_counts_agrees_with_the_numpy_one():
    """Counts of ``_COMPILED_MIN`` values or more go to scipy's counter (imported then), smaller
    ones to the numpy merge sort: both give the same counts on either side of the switch."""
    rng = np.random.default_rng(7)
    for n in (crossings._COMPILED_MIN - 1, crossings._COMPILED_MIN, 3 * crossings._COMPILED_MIN):
        values = rng.integers(0, n // 3, n)
        via_counter = count_inversions(values)
        switch = crossings._COMPILED_MIN
        try:
            crossings._COMPILED_MIN = 10 ** 12  # numpy only
            assert count_inversions(values) == via_counter
        finally:
            crossings._COMPILED_MIN = switch
    # brute force on the smallest, O(n^2) in numpy
    values = rng.integers(0, 50, crossings._COMPILED_MIN)
    brute = int(np.triu(values[:, None] > values[None, :], 1).sum())
    assert count_inversions(values) == brute


def test_hand_made_crossings():
    rows = [0, 10]
    assert count_crossings([[[0, 0], [0, 10]], [[5, 0], [5, 10]]], rows) == 0
    assert count_crossings([[[0, 0], [5, 10]], [[5, 0], [0, 10]]], rows) == 1  # crossing on the scan line
    assert count_crossings([[[0, 0], [4, 10]], [[5, 0], [1, 10]]], rows) == 1
    assert count_crossings([[[0, 0], [5, 10]], [[5, 0], [5, 10]]], rows) == 0  # shared end
    assert count_crossings([[[5, 0], [0, 10]], [[5, 0], [9, 10]]], rows) == 0  # shared start
    # a long edge through a middle row, crossing two short ones
    three = [0, 10, 20]
    lines = [[[0, 0], [10, 10], [10, 20]], [[5, 0], [5, 10]], [[12, 10], [2, 20]]]
    assert count_crossings(lines, three) == 2
    # horizontal (LR) drawings: same count with the axes swapped
    swapped = [[[y, x] for x, y in pts] for pts in lines]
    assert count_crossings(swapped, three, vertical=False) == 2
