"""XSS in a real browser: load graphs whose names, ops, devices and attrs are payloads; nothing runs.

A real ``tensorboard`` process (``tests.tensorboard_process.TensorBoardProcess``) serves the runs
``xss`` (TF-written string Consts and ``_xss`` attrs) and ``xss_names`` (payload node names,
op names, devices and attrs, written by ``tf.summary.graph``); headless Debian Chromium opens
the Graph Explorer tab, draws the graph, searches for every payload, opens each hit's info pane,
and also opens the raw JSON / pbtxt routes as top-level pages. Every payload assigns
``top.__xss_ran`` and calls ``alert``: the test asserts no dialog opened and ``__xss_ran`` is
unset in every frame, and that the payloads show up as literal text.
"""

from __future__ import annotations

import json
import shutil
import urllib.parse

import pytest

from tests.hostile.hostile_logs import XSS_PAYLOADS
from tests.tensorboard_process import TensorBoardProcess
from tests.ui.conftest import REPO, app_frame, wait_settled

pytestmark = pytest.mark.slow
OURS = "/data/plugin/graph_explorer"


@pytest.fixture(scope="module")
def server(hostile_logs_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("xss_browser_logdir")
    for kind in ("xss", "xss_names"):
        shutil.copytree(hostile_logs_root / kind / kind, root / kind)
    log = REPO / "tests" / "_artifacts" / "tensorboard" / "xss_browser.log"
    tb = TensorBoardProcess(root, log_path=log, min_runs=2).start()
    yield tb.url
    tb.stop()


def _nothing_ran(page) -> None:
    page.wait_for_timeout(300)  # let any onerror/onload handler fire
    assert page.dialogs == []
    for frame in page.frames:
        assert frame.evaluate("typeof window.__xss_ran") == "undefined", frame.url
    assert page.evaluate("typeof window.__xss_ran") == "undefined"


def _search(frame, q: str = "", op: str = "") -> list[str]:
    frame.fill("[data-search=q]", q)
    frame.fill("[data-search=op]", op)
    frame.evaluate("delete document.body.dataset.searchHits")
    frame.click("[data-action=search]")
    frame.wait_for_function("document.body.dataset.searchHits !== undefined")
    return frame.eval_on_selector_all("[data-hit]", "ls => ls.map(l => l.dataset.hit)")


def _open_info(frame, name: str) -> tuple[str, str]:
    """Click the search hit ``name`` (the app expands its way to it): (info pane's node, text)."""
    frame.evaluate("delete document.body.dataset.infoName")
    frame.click(f"[data-hit={json.dumps(name)}]")
    frame.wait_for_function("document.body.dataset.infoName !== undefined")
    return frame.evaluate("document.body.dataset.infoName"), frame.inner_text("[data-info]")


def _open_run(frame, run: str) -> None:
    frame.select_option("[data-picker=run]", run)
    status = wait_settled(frame)
    assert status == "ready", frame.evaluate("document.body.dataset.error || ''")
    frame.wait_for_function("Number(document.body.dataset.drawnNodes) > 0")


def test_payload_names_ops_and_attrs_are_drawn_and_shown_as_text(page, server):
    page.goto(f"{server}/#graph_explorer")
    frame = app_frame(page)
    wait_settled(frame)
    _open_run(frame, "xss_names")
    _nothing_ran(page)
    hits = _search(frame, q=".")
    assert {f"scope{i}/{p}" for i, p in enumerate(XSS_PAYLOADS)} <= set(hits)
    for payload in XSS_PAYLOADS:
        assert payload in hits, hits  # the data-hit attribute holds the payload unchanged
        shown, info = _open_info(frame, payload)
        # "<script>...</script>" is an op inside the one-op group "<script>...<": the jump opens
        # that group (one-op groups open since the search hits carry their ancestors).
        assert shown == payload
        assert info.count(payload) >= 3  # name, op, device, _xss attr: literal text
    assert set(_search(frame, op=XSS_PAYLOADS[1])) == {XSS_PAYLOADS[1], f"scope1/{XSS_PAYLOADS[1]}"}
    _nothing_ran(page)


def test_tf_written_attr_payloads_are_shown_as_text(page, server):
    page.goto(f"{server}/#graph_explorer")
    frame = app_frame(page)
    wait_settled(frame)
    _open_run(frame, "xss")
    consts = _search(frame, op="Const")
    assert {f"payload{i}" for i in range(len(XSS_PAYLOADS))} <= set(consts)
    hits = _search(frame, op="Identity")
    for i, payload in enumerate(XSS_PAYLOADS):
        name = f"a>b-{i}.svg"
        assert name in hits
        shown, text = _open_info(frame, name)
        assert shown == name
        assert payload in text  # the _xss attr TF wrote
    _nothing_ran(page)


def test_raw_routes_opened_as_pages_render_as_text(page, server):
    urls = [f"{OURS}/graph?run=xss_names", f"{OURS}/graph?run={urllib.parse.quote(XSS_PAYLOADS[0])}"]
    for payload in XSS_PAYLOADS:
        urls.append(f"{OURS}/node?" + urllib.parse.urlencode({"run": "xss_names", "name": payload, "wait": "30"}))
        urls.append(f"{OURS}/search?" + urllib.parse.urlencode({"run": "xss_names", "op": payload, "wait": "30"}))
        urls.append(f"{OURS}/node?" + urllib.parse.urlencode({"run": "xss_names", "name": payload + "?"}))
    for url in urls:
        response = page.goto(server + url)
        assert "html" not in response.headers["content-type"], url
        assert page.evaluate("document.querySelectorAll('img, svg, script, iframe').length") == 0, url
        text = page.evaluate("document.body.innerText")
        assert "onerror" in text or "script" in text or "svg" in text or "__xss_ran" in text, (url, text[:200])
        _nothing_ran(page)


def test_compare_list_deep_link_and_svg_export_keep_payloads_as_text(page, server, tmp_path):
    """The compare, deep-link and export views of graph text: the diff list and info pane, a
    deep link's warning line
    (the payload in the URL), and the exported SVG (payloads XML-escaped, no script element)."""
    import xml.etree.ElementTree as ET

    selected = urllib.parse.quote(XSS_PAYLOADS[0], safe="")
    page.goto(f"{server}/#graph_explorer&p.graph_explorer.run=xss_names&p.graph_explorer.selected={selected}x")
    frame = app_frame(page)
    frame.wait_for_function("document.body.dataset.restored === 'true'", timeout=60000)
    assert XSS_PAYLOADS[0] + "x" in frame.text_content("[data-link-warning]")
    _nothing_ran(page)
    frame.select_option("[data-picker=compare]", json.dumps(["xss", "__run_graph__", "op", None], separators=(",", ":")))
    frame.wait_for_function("document.body.dataset.diffSame === 'false'", timeout=60000)
    listed = frame.eval_on_selector_all("[data-diff-entry]", "ls => ls.map(l => l.dataset.diffEntry)")
    assert set(XSS_PAYLOADS) <= set(listed)  # added: they are not in the other graph
    frame.click(f"[data-diff-entry={json.dumps(XSS_PAYLOADS[1])}]")
    frame.wait_for_function("document.body.dataset.infoName !== undefined")
    _nothing_ran(page)
    with page.expect_download() as dl:
        frame.click("[data-action=download-svg]")
    path = tmp_path / "view.svg"
    dl.value.save_as(path)
    root = ET.fromstring(path.read_bytes())
    svg = "{http://www.w3.org/2000/svg}"
    assert not list(root.iter(svg + "script")) and not list(root.iter(svg + "foreignObject"))
    names = {g.get("data-name") for g in root.iter(svg + "g")} - {None}  # edges have no data-name
    drawn = {n["name"] for n in frame.evaluate("window.graphExplorer.nodes()")}
    assert names == drawn  # every drawn name, payloads included, came back intact from the XML
    assert any(p in names for p in XSS_PAYLOADS)
    _nothing_ran(page)
