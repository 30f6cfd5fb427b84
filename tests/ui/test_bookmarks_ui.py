"""Bookmarks in a real TensorBoard + Chromium: a view saved under a name, another view opened,
the bookmark opened again (graph, open groups, selection, colours as saved, in the URL too); kept
per logdir in the browser (localStorage under /graphs' data_location) across a reload; exported
as JSON, deleted, imported back; hostile or malformed imports refused with a clear message and
names shown as text, never HTML. Screenshots under tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import SCREENSHOTS
from tests.ui.conftest import app_frame, wait_settled
from tests.ui.test_deep_link_ui import show_layer1_matmul
from tests.ui.test_graph_explorer_ui import ds, open_graph

pytestmark = pytest.mark.slow


def open_menu(frame) -> None:
    if ds(frame, "bookmarksMenu") != "open":
        frame.click("[data-action=bookmarks]")
    frame.wait_for_function("document.body.dataset.bookmarksMenu === 'open'")


def import_text(frame, tmp_path, name: str, text: str) -> str:
    f = tmp_path / name
    f.write_text(text)
    frame.evaluate("delete document.body.dataset.bookmarksNote")
    frame.set_input_files("[data-bookmark-file]", str(f))
    frame.wait_for_function("!!document.body.dataset.bookmarksNote")
    return ds(frame, "bookmarksNote")


def test_bookmark_round_trip_export_import(page, explorer, tensorboard_url, ui_logdir, tmp_path):
    frame = explorer
    show_layer1_matmul(page, frame)  # the view to keep
    saved_link = ds(frame, "link")

    open_menu(frame)
    assert "No bookmarks" in frame.text_content("[data-bookmark-list]")
    frame.fill("[data-bookmark-name]", "layer1 matmul")
    frame.click("[data-action=bookmark-save]")
    frame.wait_for_function("document.body.dataset.bookmarks === '1'")
    assert ds(frame, "bookmarksNote") == 'Saved "layer1 matmul".'
    # kept in this browser under the logdir the server names
    stored = frame.evaluate("Object.keys(localStorage).filter(k => k.startsWith('graph_explorer.bookmarks.'))")
    assert stored == [f"graph_explorer.bookmarks.{ui_logdir}"]
    page.screenshot(path=str(SCREENSHOTS / "bookmarks_menu_saved.png"))
    frame.click("[data-action=bookmarks]")  # close

    # somewhere else: another run, no colours
    open_graph(frame, "torch_cnn")
    frame.select_option("[data-picker=color]", "none")
    assert ds(frame, "selected") == ""

    # the bookmark brings the saved view back, and the URL with it
    open_menu(frame)
    frame.click("[data-bookmark='layer1 matmul']")
    frame.wait_for_function("document.body.dataset.selected === 'layer1/MatMul'", timeout=60000)
    wait_settled(frame)
    assert frame.input_value("[data-picker=run]") == "tf1_graph" and frame.input_value("[data-picker=step]") == "0"
    assert "layer1" in json.loads(ds(frame, "expanded"))
    assert ds(frame, "colorMode") == "structure" and ds(frame, "linkWarnings") == "0"
    assert ds(frame, "link") == saved_link
    assert ds(frame, "bookmarksMenu") == ""  # the menu closed on opening

    # kept across a reload (same browser, same logdir)
    page.reload()
    frame = app_frame(page)
    wait_settled(frame)
    open_menu(frame)
    assert frame.eval_on_selector_all("[data-bookmark]", "els => els.map(e => e.textContent)") == ["layer1 matmul"]

    # export, delete, import back
    with page.expect_download() as dl:
        frame.click("[data-action=bookmark-export]")
    exported = tmp_path / "exported.json"
    dl.value.save_as(exported)
    data = json.loads(exported.read_text())
    assert data["format"] == "graph_explorer.bookmarks" and data["data_location"] == str(ui_logdir)
    [b] = data["bookmarks"]
    assert b["name"] == "layer1 matmul" and b["link"]["run"] == "tf1_graph" and b["link"]["selected"] == "layer1/MatMul"
    frame.click("[data-bookmark-delete='layer1 matmul']")
    frame.wait_for_function("document.body.dataset.bookmarks === '0'")
    assert import_text(frame, tmp_path, "back.json", exported.read_text()) == "Imported 1 bookmark."
    assert ds(frame, "bookmarks") == "1"

    # hostile and malformed files: refused whole, with the reason; nothing added
    refusals = {
        "not json": "Not a bookmark file: not JSON",
        '{"format": "other", "version": 1, "bookmarks": []}': 'Not a bookmark file: "format" is not',
        '{"format": "graph_explorer.bookmarks", "version": 1, "bookmarks": {"a": 1}}': '"bookmarks" is not a list',
        json.dumps([{"name": "ok", "link": {"run": "tf1_graph"}}, {"name": "bad", "link": {"run": 5}}]):
            'Not imported: Bookmark 2: "link.run" must be a text.',
        json.dumps([{"name": "x", "link": {"run": "tf1_graph", "expanded": [1, 2]}}]): '"link.expanded" must be a list of group names',
        json.dumps([{"name": "", "link": {"run": "tf1_graph"}}]): '"name" must be a non-empty text',
        json.dumps([{"name": "a", "link": {"run": "r"}}, {"name": "a", "link": {"run": "r"}}]): "is used twice",
    }
    for i, (text, reason) in enumerate(refusals.items()):
        note = import_text(frame, tmp_path, f"bad{i}.json", text)
        assert reason in note, (text, note)
        assert ds(frame, "bookmarks") == "1" and ds(frame, "bookmarksImport") == "refused"
    assert frame.eval_on_selector("[data-bookmark-note]", "e => e.classList.contains('gx-bad')")

    # markup in a name stays text
    evil = '<img src=x onerror="document.body.dataset.pwned=1"><b>bold</b>'
    note = import_text(frame, tmp_path, "evil.json", json.dumps([{"name": evil, "link": {"run": "tf1_graph", "tag": "__run_graph__"}}]))
    assert note == "Imported 1 bookmark."
    frame.wait_for_timeout(200)
    assert frame.eval_on_selector_all("[data-bookmark-menu] img, [data-bookmark-menu] b", "els => els.length") == 0
    assert evil in frame.eval_on_selector_all("[data-bookmark]", "els => els.map(e => e.textContent)")
    assert ds(frame, "pwned") == ""
    page.screenshot(path=str(SCREENSHOTS / "bookmarks_menu_imported.png"))
    assert not page.errors
