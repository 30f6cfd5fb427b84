"""Export of the view in a real TensorBoard + Chromium: the downloaded SVG parses as
SVG 1.1, holds every drawn node's label, has no external reference, and carries the view's
colours and selection; the PNG download is a PNG of the same drawing."""

from __future__ import annotations

import base64
import re
import struct
import xml.etree.ElementTree as ET

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.test_graph_explorer_ui import ds, nodes, open_graph

pytestmark = pytest.mark.slow

SVG = "{http://www.w3.org/2000/svg}"


def test_download_svg_and_png_of_the_view(page, explorer, tmp_path):
    frame = explorer
    open_graph(frame, "torch_cnn")
    frame.evaluate("window.graphExplorer.setExpanded(['ResNetLike', 'ResNetLike/Sequential[layer1]'])")
    frame.wait_for_function("JSON.parse(document.body.dataset.expanded).length === 2")
    frame.wait_for_function("document.body.dataset.status === 'ready'")
    frame.select_option("[data-picker=color]", "structure")
    frame.evaluate("window.graphExplorer.center('ResNetLike/Linear[fc]')")
    box = frame.frame_element().bounding_box()
    fc = next(n for n in nodes(frame) if n["name"] == "ResNetLike/Linear[fc]")
    page.mouse.click(box["x"] + fc["x"], box["y"] + fc["y"])
    frame.wait_for_function("document.body.dataset.selected === 'ResNetLike/Linear[fc]'")
    with page.expect_download() as dl:
        frame.click("[data-action=download-svg]")
    path = tmp_path / dl.value.suggested_filename
    dl.value.save_as(path)
    assert path.name == "torch_cnn___run_graph__.svg"
    text = path.read_text(encoding="utf-8")
    root = ET.fromstring(text.encode("utf-8"))  # well-formed XML
    assert root.tag == SVG + "svg" and root.get("version") == "1.1"
    # self-contained: no href at all, url() only to its own marker and to its embedded font
    urls = re.findall(r"url\(([^)]*)\)", text)
    assert "href" not in text and {u for u in urls if not u.startswith("data:")} == {"#arrow"}
    (font,) = [u for u in urls if u.startswith("data:")]
    assert font.startswith("data:font/woff;base64,")
    assert base64.b64decode(font.split(",", 1)[1])[:4] == b"wOFF"  # the font file itself
    style = root.find(f"{SVG}defs/{SVG}style").text
    assert "@font-face" in style and root.get("font-family").startswith("'GX Export'")
    texts = {t.text for t in root.iter(SVG + "text")}
    drawn = [n for n in nodes(frame) if n["kind"] != "bridge"]
    assert len(drawn) > 12
    missing = [n["label"] for n in drawn if n["label"] not in texts]
    assert not missing, missing
    groups = {g.get("data-name"): g for g in root.iter(SVG + "g") if g.get("data-name")}
    assert set(groups) == {n["name"] for n in nodes(frame)}
    sel = groups["ResNetLike/Linear[fc]"].find(SVG + "rect")
    assert sel.get("stroke") == "#f57c00" and sel.get("stroke-width") == "2.5"  # the selection
    fills = {g.find(SVG + "rect").get("fill") for name, g in groups.items()
             if g.get("class") == "node meta" and g.find(SVG + "rect") is not None}
    assert len(fills) >= 3  # structure colours, not one default group fill
    with page.expect_download() as dl_png:
        frame.click("[data-action=download-png]")
    png = tmp_path / dl_png.value.suggested_filename
    dl_png.value.save_as(png)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    view_w, view_h = float(root.get("width")), float(root.get("height"))
    assert (width, height) == (round(view_w * 2), round(view_h * 2))
    (SCREENSHOTS / "export_view.png").write_bytes(data)
    (SCREENSHOTS / "export_view.svg").write_text(text, encoding="utf-8")
    assert ds(frame, "exported") == "png" and not page.errors
