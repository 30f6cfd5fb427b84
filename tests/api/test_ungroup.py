"""``ungroup`` (the stock "ungroup this series"): named SeriesNodes are not formed, through TensorBoard."""

from __future__ import annotations

import json

import pytest

from tests.tb_app import OURS, TbApp

RUN = "torch_transformer"
ENCODER = "TransformerEncoder"
LAYERS = "TransformerEncoder/TransformerEncoderLayer[0-5]"
ATTN0 = "TransformerEncoder/TransformerEncoderLayer[0]/MultiheadAttention[self_attn]"


@pytest.fixture(scope="module")
def app(real_logs):
    app = TbApp(real_logs.get(RUN))
    yield app
    app.ours.pool.close()


def _scene(app, expanded, **extra):
    return app.json(OURS + "/scene", run=RUN, expanded=json.dumps(expanded), wait="30", **extra)


def _nodes(scene) -> dict[str, str]:
    return {n["name"]: n["kind"] for n in scene["nodes"]}


def test_ungrouped_block_series_shows_its_members(app):
    grouped = _nodes(_scene(app, [ENCODER]))
    assert grouped[LAYERS] == "series"
    assert not any(f"TransformerEncoderLayer[{k}]" in name for name in grouped for k in range(6))

    ungrouped = _nodes(_scene(app, [ENCODER], ungroup=json.dumps([LAYERS])))
    assert LAYERS not in ungrouped
    for k in range(6):
        assert ungrouped[f"{ENCODER}/TransformerEncoderLayer[{k}]"] == "meta"
    # the members can be expanded like any group of the parent
    inside = _nodes(_scene(app, [ENCODER, f"{ENCODER}/TransformerEncoderLayer[2]"],
                           ungroup=json.dumps([LAYERS])))
    assert any(name.startswith(f"{ENCODER}/TransformerEncoderLayer[2]/") for name in inside)


def test_ungrouped_op_series_inside_a_member(app):
    layer0 = f"{ENCODER}/TransformerEncoderLayer[0]"
    grouped = _nodes(_scene(app, [ENCODER, LAYERS, layer0, ATTN0]))
    (series,) = [name for name, kind in grouped.items() if kind == "series" and name.startswith(ATTN0 + "/")]
    # Ungrouping it changes layer 0's structure: layer 0 leaves the block series, which
    # now holds layers 1-5 (still >= 4 members with one template).
    ungrouped = _nodes(_scene(app, [ENCODER, layer0, ATTN0], ungroup=json.dumps([series])))
    assert series not in ungrouped and LAYERS not in ungrouped
    assert ungrouped[layer0] == "meta"
    assert ungrouped[f"{ENCODER}/TransformerEncoderLayer[1-5]"] == "series"
    lo, hi = map(int, series[len(ATTN0) + 2:-1].split("-"))  # ".../[1769-1774]"
    for k in range(lo, hi + 1):  # the series' ops are now the MultiheadAttention group's own children
        assert ungrouped[f"{ATTN0}/{k}"] == "op"
        assert f"{ATTN0}/{k}" not in grouped
    assert not any(kind == "series" for name, kind in ungrouped.items() if name.startswith(ATTN0 + "/"))


def test_ungroup_must_be_a_json_array_of_strings(app):
    response = app.get(OURS + "/scene", run=RUN, expanded="[]", ungroup="not json", wait="30")
    assert response.status_code == 400
    assert "`ungroup` must be a JSON array of strings" in response.get_data(as_text=True)
