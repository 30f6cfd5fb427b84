// The main graph's own choices, kept in the browser per graph (ui/prefs.ts): the nodes removed
// from the main graph, the series shown ungrouped (the server's `ungroup`) and the extract
// option; and the side lists that show the first two, each entry a button that takes it back.
import type { GraphRef } from "../api/types";
import { loadPrefs, savePrefs } from "../ui/prefs";
import type { GraphView } from "./graph_view";
import { renderHiddenList, renderUngroupedList } from "./side_lists";

export interface GraphChoicesHost {
  readonly main: GraphView;
  readonly hiddenBox: HTMLElement;
  readonly ungroupBox: HTMLElement;
  readonly extract: HTMLInputElement;
  readonly kernels: HTMLInputElement;
  /** a node was removed or added back: the selection's info pane says which */
  hiddenChanged(): void;
}

export class GraphChoices {
  constructor(private readonly host: GraphChoicesHost) {}

  /** Graph `ref` opens: its saved choices (nothing loads yet). */
  load(ref: GraphRef): void {
    const main = this.host.main;
    const prefs = loadPrefs(ref);
    main.st.hidden = prefs.hidden;
    main.view = prefs.view;
    this.host.extract.checked = prefs.view.extract;
    this.host.kernels.checked = !!prefs.view.kernels;
  }

  /** "Group by kernel" changed (server `group=kernels`): the scene comes again, the kernel groups
   * that were open closed when they go. */
  setKernels(on: boolean): void {
    const main = this.host.main;
    main.view = { ...main.view, kernels: on };
    if (!on && main.model) {
      const gone = main.model.nodes.filter((n) => n.inferred === "kernel").map((n) => n.name);
      main.expanded = main.expanded.filter((g) => !gone.some((k) => g === k || g.startsWith(k + "/")));
    }
    this.save();
    void main.loadScene(null);
  }

  /** The extract option changed: the scene comes again. */
  setExtract(on: boolean): void {
    const main = this.host.main;
    main.view = { ...main.view, extract: on };
    this.save();
    void main.loadScene(null);
  }

  /** "Remove from main graph" / "add back", persisted per graph. */
  toggleHidden(name: string): void {
    const main = this.host.main;
    if (!main.ref) return;
    if (main.st.hidden.has(name)) main.st.hidden.delete(name);
    else main.st.hidden.add(name);
    this.save();
    this.renderLists();
    this.host.hiddenChanged();
    main.minimapDirty();
    main.redraw();
  }

  /** Series grouping per SeriesNode: ungrouped series show their members (server `ungroup`). */
  setGrouped(series: string, grouped: boolean): void {
    const main = this.host.main;
    if (!main.ref) return;
    const rest = main.view.ungroup.filter((s) => s !== series);
    main.view = { ...main.view, ungroup: grouped ? rest : [...rest, series] };
    // an open group that no longer exists would make the server refuse the scene
    if (!grouped) main.expanded = main.expanded.filter((g) => g !== series && !g.startsWith(series + "/"));
    this.save();
    this.renderLists();
    void main.loadScene(null);
  }

  renderLists(): void {
    const main = this.host.main;
    renderHiddenList(this.host.hiddenBox, main.st.hidden, (n) => this.toggleHidden(n));
    renderUngroupedList(this.host.ungroupBox, main.view.ungroup, (n) => this.setGrouped(n, true));
  }

  private save(): void {
    const main = this.host.main;
    if (main.ref) savePrefs(main.ref, { hidden: main.st.hidden, view: main.view });
  }
}
