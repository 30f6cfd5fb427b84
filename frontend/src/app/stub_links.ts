// Stubs and bridges stand for the other end of an edge (a cut edge's far node, a group border's
// outside node): hovering one names both ends, clicking one goes to its other end (issue 40: a
// click asked the server for the stub itself and showed "Not found"). Part of app.ts's canvas host.
import type { SceneModel } from "../render/model";

const HELPERS = new Set(["stub", "bridge"]);

/** The node a stub or bridge `name` stands for (its `of`), null for any other node. */
export function otherEnd(m: SceneModel | null, name: string | null): string | null {
  const n = m && name !== null ? m.node(name) : undefined;
  return n && HELPERS.has(n.kind) && n.of ? n.of : null;
}

/** What hovering node `name` says: a stub or bridge its label and both ends of its edges
 * (`← down_blocks: UNet/down_blocks → UNet/mid_block`), any other node its name. */
export function hoverText(m: SceneModel | null, name: string | null): string {
  if (m === null || name === null) return name ?? "";
  const far = otherEnd(m, name);
  const i = m.byName.get(name);
  if (far === null || i === undefined) return name;
  const n = m.nodes[i];
  const ends = (ids: Uint32Array, pick: (e: { source: string; target: string }) => string) =>
    [...new Set([...ids].map((e) => pick(m.edges[e])))];
  const into = ends(m.edgesInto(i), (e) => e.source); // near ends feeding an out-stub
  const out = ends(m.edgesOutOf(i), (e) => e.target); // near ends an in-stub feeds
  const lines = [...into.map((s) => `${s} → ${far}`), ...out.map((t) => `${far} → ${t}`)];
  return `${n.label ?? name}\n${lines.join("\n") || far}\n(click: go to ${far})`;
}
