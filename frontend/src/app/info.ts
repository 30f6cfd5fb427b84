// The info pane of the selected node: its NodeDetails fetched from the server (text only,
// see ui/info_pane.ts), dropped (or their error) when the selection moved on meanwhile.
import * as api from "../api/client";
import type { GraphRef } from "../api/types";
import { clear, el } from "../ui/dom";
import { renderInfo, type InfoActions } from "../ui/info_pane";

export async function showInfo(
  box: HTMLElement,
  ref: GraphRef,
  view: api.ViewOptions,
  name: string,
  stillSelected: () => boolean,
  actions: InfoActions,
): Promise<void> {
  clear(box);
  box.appendChild(el("div", { className: "gx-muted", text: `loading ${name}…` }));
  try {
    const d = await api.fetchNode(ref, name, view);
    if (!stillSelected()) return;
    renderInfo(box, d, actions);
    document.body.dataset.infoName = d.name;
  } catch (e) {
    if (!stillSelected()) return; // the pane shows another node by now
    clear(box);
    box.appendChild(el("div", { className: "gx-error gx-on", text: (e as Error).message }));
  }
}
