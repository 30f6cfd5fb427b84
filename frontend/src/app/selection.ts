// The main view's selection: selecting a node (announced for screen readers, traced from,
// matched in the second pane, described in the info pane: app/info.ts, then the diff's and the
// node data's parts of it), opening or closing a group (which becomes the selection), and what
// the info pane's buttons do.
import { clear } from "../ui/dom";
import type { InfoActions } from "../ui/info_pane";
import { GHOST_PREFIX, type Compare } from "./compare";
import type { GraphView } from "./graph_view";
import { appendCost } from "./cost";
import { showInfo } from "./info";
import type { NodeDataPanel } from "./node_data";

export interface NodeSelectionHost {
  readonly main: GraphView;
  readonly infoBox: HTMLElement;
  /** where the selected node's name goes (the page's body) */
  readonly data: DOMStringMap;
  readonly compare: Compare;
  readonly nodeData: NodeDataPanel;
  /** tell screen readers (app/keyboard.ts's live region) */
  announce(name: string | null): void;
  /** the trace follows the selection */
  updateTrace(): void;
  /** the second pane selects the node's match */
  follow(name: string | null): void;
  jump(name: string): void;
  toggleHidden(name: string): void;
  ungroup(series: string): void;
  traceInputs(): void;
}

export class NodeSelection {
  /** the node whose details the info pane is fetching (null: none on their way) */
  private infoPending: string | null = null;

  constructor(private readonly host: NodeSelectionHost) {}

  toggleExpand(name: string): void {
    if (name.startsWith(GHOST_PREFIX)) return;
    const { main, data } = this.host;
    main.toggle(name, () => {
      main.st.selected = name;
      data.selected = name;
      this.host.announce(name);
      this.host.updateTrace();
    });
  }

  select(name: string | null): void {
    // the second click of a double-click: the selected node's details are on their way, not
    // fetched again beside the double-click's expand
    const again = name !== null && name === this.host.main.st.selected && name === this.infoPending;
    this.host.main.st.selected = name;
    this.host.data.selected = name ?? "";
    this.host.announce(name);
    this.host.updateTrace();
    this.host.follow(name); // its match in the second pane
    if (!name) {
      clear(this.host.infoBox);
      return;
    }
    if (!again) this.showInfo(name);
  }

  showInfo(name: string): void {
    const { main, compare, nodeData } = this.host;
    const ref = main.ref;
    if (!ref) return;
    const still = () => main.st.selected === name;
    const box = this.host.infoBox;
    if (name.startsWith(GHOST_PREFIX)) {
      clear(box); // a removed node: only the base graph has it
      void compare.appendInfo(box, name, still);
      return;
    }
    this.infoPending = name;
    void showInfo(box, ref, main.view, name, still, this.infoActions())
      .then(() => {
        if (this.infoPending === name) this.infoPending = null; // a later click asks again
      })
      .then(() => appendCost(box, ref, main.view, name, still))
      .then(() => compare.appendInfo(box, name, still))
      .then(() => nodeData.appendInfo(box, name, still));
  }

  private infoActions(): InfoActions {
    const host = this.host;
    const main = host.main;
    return {
      jump: (n) => host.jump(n),
      toggleHidden: (n) => host.toggleHidden(n),
      isHidden: (n) => main.st.hidden.has(n),
      toggleExpand: (n) => this.toggleExpand(n),
      isGroup: (n) => main.isGroup(n),
      isExpanded: (n) => main.expanded.includes(n),
      ungroup: (n) => host.ungroup(n),
      trace: () => host.traceInputs(),
      graphBreaks: () => Number(main.model?.scene.stats?.graph_breaks ?? 0),
    };
  }
}
