// The diff's node matching read off a /diff answer (GraphDiff of B, the graph shown, against the
// base A). The server matches by name first, then by structure (tb_graph_plugin/diff/match.py),
// and the answer carries every pair: a pair matched under different names is a changed entry with
// `old_name` (field "name"), a B node without partner is added, an A node without partner removed,
// and every other node is the same node under the same name on both sides (diff/classify.py's
// post-condition; http_api.md, /diff). Scene names of ghosts (removed A nodes drawn in B's scene)
// carry GHOST_PREFIX.
import type { GraphDiff } from "../api/types";
import { GHOST_PREFIX } from "./compare";

export class DiffMatching {
  private readonly added = new Set<string>(); // B names without partner
  private readonly removed = new Set<string>(); // A names without partner
  private readonly aOfB = new Map<string, string>(); // B name -> A name, where they differ
  private readonly bOfA = new Map<string, string>(); // A name -> B name, where they differ

  constructor(readonly diff: GraphDiff) {
    for (const e of diff.entries) {
      if (e.status === "added") this.added.add(e.name);
      else if (e.status === "removed") this.removed.add(e.name);
      else if (e.old_name && e.old_name !== e.name) {
        this.aOfB.set(e.name, e.old_name);
        this.bOfA.set(e.old_name, e.name);
      }
    }
  }

  /** The A partner of B's node `name` (a ghost stands for its A node); null: added in B. */
  aOf(name: string): string | null {
    if (name.startsWith(GHOST_PREFIX)) return name.slice(GHOST_PREFIX.length);
    if (this.added.has(name)) return null;
    return this.aOfB.get(name) ?? name;
  }

  /** The B partner of A's node `name`; null: removed (only A has it). */
  bOf(name: string): string | null {
    if (this.removed.has(name)) return null;
    return this.bOfA.get(name) ?? name;
  }

  isRemoved(aName: string): boolean {
    return this.removed.has(aName);
  }
}
