"""Knobs of the compound scene composition, declared once, with the stock TensorBoard values."""

from __future__ import annotations

import dataclasses

from tb_graph_plugin.layout.model import LayoutOptions

__all__ = ["SceneOptions"]


@dataclasses.dataclass(frozen=True)
class SceneOptions:
    layout: LayoutOptions = LayoutOptions()  # per-group engine and spacing (rankdir BT, 5/25/5)
    # collapsed node sizes (stock render.ts values)
    op_size: tuple[float, float] = (15.0, 6.0)
    meta_width: float = 60.0  # the narrowest collapsed group
    # the widest (~37 characters: `UNetMidBlock2DCrossAttn[mid_block] 81`): longer labels are cut
    # with an ellipsis, the full label on hover (issue 40: 130, ~19 characters, cut most classes)
    meta_max_width: float = 240.0
    label_char_width: float = 5.8  # mean advance of the frontend's 10 px label font (Roboto)
    meta_label_padding: float = 24.0  # expand toggle and the gaps around label and cardinality
    meta_height: tuple[float, float] = (15.0, 60.0)  # by cardinality over meta_card_domain
    meta_card_domain: tuple[float, float] = (1.0, 200.0)
    embedding_size: tuple[float, float] = (8.0, 6.0)
    embedding_gap: float = 2.0
    max_annotations: int = 5  # embeddings shown per side of a node
    bridge_size: tuple[float, float] = (4.0, 4.0)
    # long skip edges -> stubs (nGraph: jump distance > 20); 0 disables
    stub_min_span: int = 20
    # a stub is a pill holding its label (``→ lm_head``), 15 high as the smallest group, whose
    # label it shares (9 px: frontend node_draw's min(10, 0.6 * height)); as wide as its label at
    # stub_char_width per character, between stub_min_width and stub_max_width (then cut, with the
    # full label on hover). Issue 40: blank 10 x 6 pills read as nothing at every zoom.
    stub_height: float = 15.0
    stub_min_width: float = 24.0
    stub_max_width: float = 120.0
    stub_char_width: float = 4.8  # Roboto at 9 px: 4.4-4.9 per character (measured in Chromium)
    stub_label_padding: float = 12.0  # 3 px each side and the arrow's extra width
    # expanded group box
    padding_top: float = 24.0  # room for the group label
    header_band: float = 13.0  # the label's band at the top: no bridge drawn in it (border.py)
    bridge_band_aspect: float = 4.0  # bridges wrap into rows past max(width, this * height) (border.py)
    padding: float = 10.0
    series_gap: float = 8.0  # between stacked series members
    # auxiliary node extraction (stock: minNodeCountForExtraction 15, minDegreeForExtraction 5,
    # maxControlDegree 4, outExtractTypes ['NoOp'])
    extract: bool = True
    extract_min_children: int = 15
    extract_min_degree: int = 5
    max_control_degree: int = 4
    out_extract_types: tuple[str, ...] = ("NoOp",)
    side_column_gap: float = 20.0
    # floating copies ([NGRAPH-VIS]): a parameter/constant-like source feeding at least this many
    # children of its group is drawn as a copy beside each consumer (floating.py); 0 disables
    float_fanout: int = 3
    # hub bridges (annotate.py): an outside neighbour joined to more flow children than this is
    # drawn as a stub beside each of them instead of one bridge node; 0 disables
    max_bridge_degree: int = 40
    # component packing (pack.py, Graphviz pack / ELK component packing): a group whose children
    # fall into several weakly connected components (bridges aside) is drawn as a grid of them,
    # rows wrapped at about pack_aspect (width / height); with bridges only from
    # pack_min_components components on
    pack: bool = True
    pack_min_components: int = 8
    pack_aspect: float = 1.5
    pack_gap: float = 20.0
    # a flow drawing taller than fold_aspect times its width is folded into bands side by side (fold.py)
    fold_aspect: float = 8.0
    # ... and a group the first view opens, taller than its room there (issue 23): fold_window is
    # the room of the whole first view at a readable zoom (world px: TensorBoard at 1400 x 900
    # shows a 1083 x 771 canvas, op labels are 7 world px drawn at >= 9 screen px, 12 px margins
    # (the frontend's FIRST_FIT_PAD), a little room to spare:
    # 810 x 568); each level of groups around a flow takes fold_level of its height (header,
    # padding, the bridge ranks, the root's input and output), fold_min_height the least left;
    # such a flow folds into the bands that fit that room at the largest scale, when that beats the
    # unfolded drawing's by fold_gain
    fold_window: tuple[float, float] = (810.0, 568.0)  # (inf, inf): no first-view folds
    fold_level: float = 100.0
    fold_min_height: float = 150.0
    fold_gain: float = 1.05
    # an op's label is drawn to the right of its ellipse (frontend OP_LABEL_PX 7, cut at 90 world px):
    # room a folded band leaves for it
    op_label_char_width: float = 4.1
    op_label_max_width: float = 90.0
    # a series stack taller than series_max_aspect times its width wraps into columns (series.py)
    series_max_aspect: float = 4.0
    series_column_gap: float = 20.0
    # edge stroke width: power scale (exponent 0.3) of summed tensor size over [1, 5e6]
    edge_width: tuple[float, float] = (0.75, 12.0)
    edge_size_domain: tuple[float, float] = (1.0, 5e6)
    edge_width_exponent: float = 0.3
