// The side panel's lists of the user's per-graph choices: nodes removed from the main graph
// (each with "add back") and ungrouped series (each with "regroup"). Text only.
import { clear, el } from "../ui/dom";

function renderList(box: HTMLElement, title: string, names: Iterable<string>, count: number, action: string, attr: string, act: (name: string) => void): void {
  clear(box);
  if (!count) return;
  box.appendChild(el("h3", { text: `${title} (${count})` }));
  const ul = el("ul", { className: "gx-list" });
  for (const name of names) {
    const btn = el("button", { className: "gx-link", text: action, [attr]: name });
    btn.addEventListener("click", () => act(name));
    ul.appendChild(el("li", {}, el("span", { text: `${name} ` }), btn));
  }
  box.appendChild(ul);
}

export function renderHiddenList(box: HTMLElement, hidden: ReadonlySet<string>, addBack: (name: string) => void): void {
  document.body.dataset.hidden = String(hidden.size);
  renderList(box, "Removed from main graph", hidden, hidden.size, "add back", "data-add-back", addBack);
}

export function renderUngroupedList(box: HTMLElement, ungrouped: readonly string[], regroup: (name: string) => void): void {
  document.body.dataset.ungrouped = JSON.stringify(ungrouped);
  renderList(box, "Ungrouped series", ungrouped, ungrouped.length, "regroup", "data-regroup", regroup);
}
