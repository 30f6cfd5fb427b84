// The search box: a regex matched by the server against names, labels and op types (or names
// only, a switch), an optional op-type filter; the hits listed in the side panel and counted
// beside the box. Enter runs the search and jumps to the first hit; Enter again (same query)
// jumps to the next, Shift+Enter to the previous, wrapping around. A hit jumps by the server's
// ancestry (navigation.jump). The "pattern" switch makes the box a pattern of ops (`A -> * -> B`,
// /search?pattern=): each match is listed (its ops' labels in path order) and is a hit at its last
// op; the ops of every match, and the closed groups holding one, are outlined on the canvas
// (`matched`, render/paint.ts) until the next search.
import * as api from "../api/client";
import type { SearchHit } from "../api/types";
import { clear, el } from "../ui/dom";
import type { Toolbar } from "../ui/toolbar";
import { jump, type NavHost } from "./navigation";

const MAX_HITS_SHOWN = 300;

export class SearchBox {
  private hits: SearchHit[] = [];
  private total = 0;
  private index = -1; // the hit jumped to last; -1 before the first jump
  private key: string | null = null; // the query the hits answer (query, op filter, names-only)
  private run = 0; // the latest search: an older answer arriving late is dropped
  private matches: string[][] = []; // a pattern search's: the ops of each match, hits[k] the last of matches[k]

  /** `marked`: a pattern search's ops and the groups holding them (outlined), or null: none. */
  constructor(private readonly host: NavHost, private readonly bar: Toolbar, private readonly box: HTMLElement,
              private readonly marked: (names: Set<string> | null) => void = () => undefined) {}

  /** Wires the toolbar's search controls. */
  attach(): void {
    const b = this.bar;
    b.searchBtn.addEventListener("click", () => void this.search());
    for (const input of [b.query, b.opQuery])
      input.addEventListener("keydown", (ev) => {
        if (ev.key !== "Enter") return;
        ev.preventDefault();
        void this.enter(ev.shiftKey ? -1 : 1);
      });
    b.namesOnly.addEventListener("change", () => {
      if (this.key !== null) void this.search();
    });
    b.pattern.addEventListener("change", () => {
      const on = b.pattern.checked;
      b.query.placeholder = on ? "pattern: MatMul -> * -> Softmax" : "search name, label, op (regex)";
      b.namesOnly.disabled = b.opQuery.disabled = on;
      document.body.dataset.searchPattern = on ? "on" : "off";
      if (this.key !== null) void this.search();
    });
  }

  /** Forgets the hits (another graph was opened). */
  reset(): void {
    this.run++;
    this.hits = [];
    this.total = 0;
    this.index = -1;
    this.key = null;
    this.matches = [];
    this.marked(null);
    clear(this.box);
    this.showCount();
  }

  private currentKey(): string {
    const b = this.bar;
    return JSON.stringify([b.query.value.trim(), b.opQuery.value.trim(), b.namesOnly.checked, b.pattern.checked]);
  }

  /** Enter: the next (step 1) or previous (-1) hit of the query in the box, searching first when
   * the query changed since the hits were fetched. */
  private async enter(step: number): Promise<void> {
    if (this.key !== this.currentKey() && !(await this.search())) return;
    if (!this.hits.length) return;
    const n = this.hits.length;
    this.index = this.index < 0 ? (step > 0 ? 0 : n - 1) : (this.index + step + n) % n;
    await this.jumpTo(this.index);
  }

  private async jumpTo(i: number): Promise<void> {
    this.index = i;
    this.showCount();
    const hit = this.hits[i];
    for (const li of this.box.querySelectorAll<HTMLElement>("li[data-hit-index]"))
      li.classList.toggle("gx-current", li.dataset.hitIndex === String(i));
    document.body.dataset.searchIndex = String(i);
    await jump(this.host, hit.name, hit.ancestors);
  }

  /** Runs the search in the box and lists its hits; false when it failed or was superseded. */
  private async search(): Promise<boolean> {
    const ref = this.host.ref();
    if (!ref) return false;
    const b = this.bar;
    const pattern = b.pattern.checked;
    const q = b.query.value.trim(), op = pattern ? "" : b.opQuery.value.trim();
    const key = this.currentKey();
    const run = ++this.run;
    this.hits = [];
    this.total = 0;
    this.index = -1;
    this.key = null;
    this.matches = [];
    this.marked(null);
    clear(this.box);
    this.box.appendChild(el("h3", { text: pattern ? "Pattern matches" : "Search results" }));
    if (!q && !op) {
      this.box.appendChild(el("div", { className: "gx-muted", text: pattern
        ? "Type a pattern: steps joined by ->, each an RE2 over the op type (op:, label:, name:), * a gap of 0..3 ops."
        : "Type a regex (name, label or op type) or an op type." }));
      this.showCount();
      return false;
    }
    try {
      const ans = pattern ? await api.fetchPattern(ref, q, this.host.view())
        : await api.fetchSearch(ref, q, op, this.host.view(), b.namesOnly.checked);
      if (run !== this.run) return false;
      this.key = key;
      this.hits = ans.hits;
      this.total = ans.total;
      this.matches = ans.matches ?? [];
      if (pattern) this.marked(new Set([...this.matches.flat(), ...(ans.match_groups ?? [])]));
      this.list(ans.complete);
      document.body.dataset.searchHits = String(ans.hits.length);
      document.body.dataset.searchTotal = String(ans.total);
      delete document.body.dataset.searchIndex;
      this.showCount();
      return true;
    } catch (e) {
      if (run !== this.run) return false;
      document.body.dataset.searchHits = "0";
      this.box.appendChild(el("div", { className: "gx-error gx-on", text: (e as Error).message }));
      this.showCount();
      return false;
    }
  }

  private list(complete: boolean): void {
    const ul = el("ul", { className: "gx-list" });
    this.hits.slice(0, MAX_HITS_SHOWN).forEach((hit, i) => {
      // what the canvas shows first (the label: "add" for a PyTorch op named 816), its op type,
      // then the scope holding it on a line of its own (a long name is not cut before its end)
      const cut = hit.name.lastIndexOf("/");
      const path = this.matches[i]; // a pattern match: its ops' last name parts in path order
      const text = path ? path.map((n) => n.slice(n.lastIndexOf("/") + 1)).join(" → ") : hit.label || hit.name.slice(cut + 1) || hit.name;
      const link = el("button", { className: "gx-link", text, title: path ? path.join("\n") : hit.name, "data-hit": hit.name });
      link.addEventListener("click", () => void this.jumpTo(i));
      ul.appendChild(el("li", { className: "gx-hit", "data-hit-index": String(i), title: hit.name }, link,
        hit.op && !path ? el("span", { className: "gx-muted", text: ` ${hit.op}` }) : null,
        cut > 0 ? el("div", { className: "gx-muted gx-hit-scope", text: hit.name.slice(0, cut) }) : null));
    });
    const shown = Math.min(this.hits.length, MAX_HITS_SHOWN);
    const partial = complete ? "" : " in the part searched (the search stopped at its time limit)";
    const total = this.total;
    this.box.appendChild(
      el("div", { className: "gx-muted", text: `${total} match${total === 1 ? "" : "es"}${partial}${shown < total ? ` (first ${shown} shown)` : ""}${total ? ". Enter in the box: next, Shift+Enter: previous." : ""}` }),
    );
    this.box.appendChild(ul);
  }

  /** The count beside the box: "3 / 17" while stepping, "17 hits" after a search, "" before. */
  private showCount(): void {
    const c = this.bar.searchCount;
    if (this.key === null) {
      c.textContent = "";
    } else if (!this.hits.length) {
      c.textContent = "no hits";
    } else {
      const more = this.total > this.hits.length ? ` of ${this.total}` : "";
      c.textContent = this.index < 0 ? `${this.total} hit${this.total === 1 ? "" : "s"}` : `${this.index + 1} / ${this.hits.length}${more}`;
    }
    c.dataset.searchCount = c.textContent;
  }
}
