"""End to end: an ``.onnx`` file from ``torch.onnx.export`` uploaded in the browser opens as a graph.

The file is the CNN of ``tests/onnx_files.py`` (default exporter), uploaded alone, without the
``.onnx.data`` weights file beside it. The app names what the server read (``ONNX model
(pytorch ...)``), draws the model between its input and output, and searching a module call finds
its group. Screenshot: tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import pytest

from tests.ui.conftest import SHOTS
from tests.ui.test_explorer_loading_and_toggles import upload
from tests.ui.test_graph_explorer_ui import canvas_ink, ds, nodes

pytestmark = pytest.mark.slow


def test_upload_onnx_file_opens_the_model(page, explorer, onnx_files):
    frame = explorer
    upload(frame, onnx_files / "cnn.onnx")
    assert ds(frame, "error") == ""
    assert canvas_ink(frame) > 20
    source = ds(frame, "uploadSource")
    assert source.startswith("ONNX model (pytorch 2."), source
    assert frame.inner_text("[data-upload-info]") == f"uploaded cnn.onnx: {source}"
    names = {n["name"] for n in nodes(frame)}
    assert any(n.startswith("TinyResNet") for n in names), sorted(names)[:20]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "test_upload_onnx_file.png"))
