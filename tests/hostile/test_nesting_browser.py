"""The UI shows the server's message for a refused deeply nested upload (issue 23, item 8).

A real ``tensorboard`` process over a copy of ``demo_logs/tf1_graph``; headless Chromium opens the
Graph Explorer tab and uploads, through the toolbar's file input, a ``.pbtxt`` nested 2,000 deep
(it answered 500 before the nesting limit). The app's error line shows the server's 400 message,
and the graph on screen stays usable.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.tensorboard_process import TensorBoardProcess
from tests.ui.conftest import REPO, app_frame, wait_settled

pytestmark = pytest.mark.slow

DEMO_LOGS = Path(__file__).resolve().parents[2] / "demo_logs"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("nesting_browser_logdir")
    shutil.copytree(DEMO_LOGS / "tf1_graph", root / "tf1_graph")
    log = REPO / "tests" / "_artifacts" / "tensorboard" / "nesting_browser.log"
    tb = TensorBoardProcess(root, log_path=log, min_runs=1).start()
    yield tb.url
    tb.stop()


def test_deeply_nested_pbtxt_upload_shows_the_servers_message(page, server, tmp_path):
    path = tmp_path / "deep.pbtxt"
    path.write_bytes(b'node { name: "a" op: "Const" }\n' + b"node { " * 2000 + b"}" * 2000)
    page.goto(f"{server}/#graph_explorer")
    frame = app_frame(page)
    assert wait_settled(frame) == "ready"

    frame.set_input_files("[data-upload]", str(path))
    frame.wait_for_function("document.body.dataset.status === 'error'", timeout=60000)
    expected = ("Upload of deep.pbtxt failed: Invalid argument: uploaded file 'deep.pbtxt' is not a GraphDef pbtxt this server reads: its "
                "messages nest 2,000 levels deep, more than the limit of 100 (protobuf's own for binary "
                "GraphDefs) (HTTP 400)")
    assert frame.evaluate("document.body.dataset.error") == expected
    assert frame.inner_text("[data-error-box]") == expected
    assert int(frame.evaluate("document.body.dataset.sceneNodes")) > 0  # tf1_graph is still drawn
    assert page.errors == []
