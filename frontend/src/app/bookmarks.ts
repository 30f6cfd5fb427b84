// Bookmarks: named views. A view is its deep link (app/deep_link.ts: LinkState), so a bookmark
// is a name and a LinkState; opening one restores it the way a shared link is restored (with the
// same warnings for what the logdir no longer has). Kept in the browser (localStorage) under the
// logdir the server reports (Listing.data_location), so each logdir has its own list. The menu
// lists them (open, delete), saves the current view under a name, exports the list as a JSON
// file and imports one: an import is checked whole (parseBookmarks) and refused with one clear
// message when anything in it is not a bookmark; names and links are only ever set as text.
import { clear, el } from "../ui/dom";
import type { LinkState } from "./deep_link";

export const FORMAT = "graph_explorer.bookmarks";
export const MAX_BOOKMARKS = 500;
const MAX_NAME = 200;
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_EXPANDED = 5000;
const STRING_KEYS = ["run", "tag", "kind", "step", "selected", "color", "trace", "compare", "split", "view"] as const;

export interface Bookmark {
  name: string;
  link: LinkState;
  saved: string; // ISO time it was saved
}

/** The JSON of an export: what an import accepts. */
export interface BookmarkFile {
  format: typeof FORMAT;
  version: 1;
  data_location: string;
  bookmarks: Bookmark[];
}

const storageKey = (location: string) => `graph_explorer.bookmarks.${location}`;

/** The bookmarks of a logdir kept in this browser (none when storage is off or holds garbage). */
export function loadBookmarks(location: string): Bookmark[] {
  try {
    const raw = window.localStorage.getItem(storageKey(location));
    return raw ? parseBookmarks(raw).bookmarks : [];
  } catch {
    return [];
  }
}

export function storeBookmarks(location: string, list: Bookmark[]): boolean {
  try {
    window.localStorage.setItem(storageKey(location), JSON.stringify(toFile(location, list)));
    return true;
  } catch {
    return false;
  }
}

export function toFile(location: string, list: Bookmark[]): BookmarkFile {
  return { format: FORMAT, version: 1, data_location: location, bookmarks: list };
}

class Invalid extends Error {}

function linkOf(v: unknown, where: string): LinkState {
  if (!v || typeof v !== "object" || Array.isArray(v)) throw new Invalid(`${where}: "link" must be an object (a view's run, tag, kind, ...).`);
  const o = v as Record<string, unknown>;
  const link: LinkState = {};
  for (const k of STRING_KEYS) {
    const x = o[k];
    if (x === undefined || x === null) continue;
    if (typeof x !== "string" || x.length > 10000) throw new Invalid(`${where}: "link.${k}" must be a text.`);
    link[k] = x;
  }
  if (o.expanded !== undefined && o.expanded !== null) {
    if (!Array.isArray(o.expanded) || o.expanded.length > MAX_EXPANDED || o.expanded.some((g) => typeof g !== "string"))
      throw new Invalid(`${where}: "link.expanded" must be a list of group names.`);
    link.expanded = [...(o.expanded as string[])];
  }
  if (!link.run) throw new Invalid(`${where}: "link.run" is missing: a bookmark names the run it shows.`);
  return link;
}

/**
 * The bookmarks of an export (the JSON text of a BookmarkFile, or a bare list of bookmarks).
 * Throws an Error whose message says what is wrong (the first thing found) when the text is not
 * JSON, not a bookmark file, or any entry is not a bookmark: an import is all or nothing.
 */
export function parseBookmarks(text: string): { bookmarks: Bookmark[]; location: string | null } {
  if (text.length > MAX_FILE_BYTES) throw new Error(`The file is ${text.length} bytes: a bookmark file is at most ${MAX_FILE_BYTES}.`);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`Not a bookmark file: not JSON (${(e as Error).message}).`);
  }
  let entries: unknown;
  let location: string | null = null;
  if (Array.isArray(data)) entries = data;
  else if (data && typeof data === "object") {
    const o = data as Record<string, unknown>;
    if (o.format !== FORMAT) throw new Error(`Not a bookmark file: "format" is not "${FORMAT}".`);
    if (o.version !== 1) throw new Error(`Bookmark file version ${JSON.stringify(o.version)?.slice(0, 20)} is not one this version reads (1).`);
    entries = o.bookmarks;
    if (typeof o.data_location === "string") location = o.data_location;
  } else throw new Error("Not a bookmark file: JSON of the wrong shape (an object or a list is expected).");
  if (!Array.isArray(entries)) throw new Error('Not a bookmark file: "bookmarks" is not a list.');
  if (entries.length > MAX_BOOKMARKS) throw new Error(`The file holds ${entries.length} bookmarks: at most ${MAX_BOOKMARKS} are kept.`);
  const out: Bookmark[] = [];
  const seen = new Set<string>();
  try {
    entries.forEach((e, i) => {
      const where = `Bookmark ${i + 1}`;
      if (!e || typeof e !== "object" || Array.isArray(e)) throw new Invalid(`${where} is not an object.`);
      const b = e as Record<string, unknown>;
      if (typeof b.name !== "string" || !b.name.trim()) throw new Invalid(`${where}: "name" must be a non-empty text.`);
      if (b.name.length > MAX_NAME) throw new Invalid(`${where}: its name is longer than ${MAX_NAME} characters.`);
      const name = b.name.trim();
      if (seen.has(name)) throw new Invalid(`${where}: the name "${name.slice(0, 60)}" is used twice.`);
      seen.add(name);
      const saved = typeof b.saved === "string" && b.saved.length <= 40 ? b.saved : "";
      out.push({ name, link: linkOf(b.link, where), saved });
    });
  } catch (e) {
    if (e instanceof Invalid) throw new Error(`Not imported: ${e.message}`);
    throw e;
  }
  return { bookmarks: out, location };
}

/** `list` with `incoming` added; an incoming bookmark replaces one of the same name. */
export function merge(list: Bookmark[], incoming: Bookmark[]): { list: Bookmark[]; added: number; replaced: number } {
  const byName = new Map(list.map((b) => [b.name, b]));
  let replaced = 0;
  for (const b of incoming) {
    if (byName.has(b.name)) replaced++;
    byName.set(b.name, b);
  }
  return { list: [...byName.values()], added: incoming.length - replaced, replaced };
}

export interface BookmarkHost {
  /** the logdir the bookmarks belong to (Listing.data_location) */
  location(): string;
  /** the view as a deep link, or null when no graph is shown */
  current(): LinkState | null;
  open(link: LinkState): void;
}

/** The toolbar's "Bookmarks" button and its menu. */
export class BookmarkMenu {
  readonly button = el("button", { text: "Bookmarks", "data-action": "bookmarks", title: "Save this view under a name, open a saved view, export or import them", "aria-expanded": "false" });
  readonly menu = el("div", { className: "gx-menu", "data-bookmark-menu": "", role: "dialog", "aria-label": "Bookmarks" });
  private readonly nameInput = el("input", { type: "text", placeholder: "name of this view", "data-bookmark-name": "", maxLength: MAX_NAME, size: 22 });
  private readonly saveBtn = el("button", { text: "Save view", "data-action": "bookmark-save" });
  private readonly list = el("ul", { className: "gx-list", "data-bookmark-list": "" });
  private readonly note = el("div", { className: "gx-muted", "data-bookmark-note": "", role: "status" });
  private readonly exportBtn = el("button", { text: "Export", "data-action": "bookmark-export", title: "Download the bookmarks as JSON" });
  private readonly importBtn = el("button", { text: "Import…", "data-action": "bookmark-import", title: "Add the bookmarks of a JSON file exported before" });
  private readonly file = el("input", { type: "file", className: "gx-hidden-file", accept: ".json,application/json", "data-bookmark-file": "" });
  private items: Bookmark[] = [];

  constructor(private readonly host: BookmarkHost) {
    this.button.addEventListener("click", () => this.toggle());
    this.saveBtn.addEventListener("click", () => this.save());
    this.nameInput.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter") this.save();
      if (ev.key === "Escape") this.toggle(false);
    });
    this.exportBtn.addEventListener("click", () => this.exportFile());
    this.importBtn.addEventListener("click", () => this.file.click());
    this.file.addEventListener("change", () => void this.importFile());
    this.menu.append(
      el("h3", { text: "Bookmarks" }),
      el("div", { className: "gx-actions" }, this.nameInput, this.saveBtn),
      this.list,
      el("div", { className: "gx-actions" }, this.exportBtn, this.importBtn, this.file),
      this.note,
    );
  }

  /** Reads this logdir's bookmarks (after the listing arrived). */
  load(): void {
    this.items = loadBookmarks(this.host.location());
    this.render();
  }

  toggle(open = !this.menu.classList.contains("gx-on")): void {
    this.menu.classList.toggle("gx-on", open);
    this.button.setAttribute("aria-expanded", String(open));
    document.body.dataset.bookmarksMenu = open ? "open" : "";
    if (open) {
      this.load();
      this.nameInput.focus();
    }
  }

  private say(text: string, error = false): void {
    this.note.textContent = text;
    this.note.classList.toggle("gx-bad", error);
    document.body.dataset.bookmarksNote = text;
  }

  private commit(): void {
    if (!storeBookmarks(this.host.location(), this.items)) this.say("This browser keeps no storage: the bookmarks last until the page is closed.", true);
    document.body.dataset.bookmarks = String(this.items.length);
    this.render();
  }

  save(): void {
    const link = this.host.current();
    if (!link) return this.say("No graph is shown: nothing to save.", true);
    const name = this.nameInput.value.trim() || defaultName(link);
    const { list, replaced } = merge(this.items, [{ name: name.slice(0, MAX_NAME), link, saved: new Date().toISOString() }]);
    if (list.length > MAX_BOOKMARKS) return this.say(`At most ${MAX_BOOKMARKS} bookmarks: delete some first.`, true);
    this.items = list;
    this.nameInput.value = "";
    this.commit();
    this.say(replaced ? `Replaced "${name}".` : `Saved "${name}".`);
  }

  private exportFile(): void {
    const json = JSON.stringify(toFile(this.host.location(), this.items), null, 1);
    const a = el("a", { download: "graph_explorer_bookmarks.json" });
    a.href = URL.createObjectURL(new Blob([json], { type: "application/json" }));
    document.body.appendChild(a);
    a.click();
    a.remove();
    window.setTimeout(() => URL.revokeObjectURL(a.href), 10000);
    document.body.dataset.bookmarksExported = String(this.items.length);
    this.say(`Exported ${this.items.length} bookmark${this.items.length === 1 ? "" : "s"}.`);
  }

  private async importFile(): Promise<void> {
    const f = this.file.files?.[0];
    this.file.value = "";
    if (!f) return;
    try {
      if (f.size > MAX_FILE_BYTES) throw new Error(`The file is ${f.size} bytes: a bookmark file is at most ${MAX_FILE_BYTES}.`);
      this.importText(await f.text());
    } catch (e) {
      this.say((e as Error).message, true);
    }
  }

  /** Adds the bookmarks of an export's text; says how many, or what is wrong with it. */
  importText(text: string): void {
    let parsed;
    try {
      parsed = parseBookmarks(text);
    } catch (e) {
      this.say((e as Error).message, true);
      document.body.dataset.bookmarksImport = "refused";
      return;
    }
    const { list, added, replaced } = merge(this.items, parsed.bookmarks);
    if (list.length > MAX_BOOKMARKS) {
      this.say(`Not imported: that would make ${list.length} bookmarks, at most ${MAX_BOOKMARKS} are kept.`, true);
      return;
    }
    this.items = list;
    this.commit();
    const other = parsed.location !== null && parsed.location !== this.host.location() ? ` (exported from ${parsed.location})` : "";
    this.say(`Imported ${added} bookmark${added === 1 ? "" : "s"}${replaced ? `, replaced ${replaced}` : ""}${other}.`);
    document.body.dataset.bookmarksImport = "done";
  }

  private remove(name: string): void {
    this.items = this.items.filter((b) => b.name !== name);
    this.commit();
    this.say(`Deleted "${name}".`);
  }

  private render(): void {
    clear(this.list);
    document.body.dataset.bookmarks = String(this.items.length);
    if (!this.items.length) {
      this.list.appendChild(el("li", { className: "gx-muted", text: "No bookmarks for this logdir yet." }));
      return;
    }
    for (const b of this.items) {
      const open = el("button", { className: "gx-link", text: b.name, title: describe(b), "data-bookmark": b.name });
      open.addEventListener("click", () => {
        this.toggle(false);
        this.host.open(b.link);
      });
      const del = el("button", { className: "gx-link gx-del", text: "×", title: `Delete "${b.name}"`, "data-bookmark-delete": b.name });
      del.addEventListener("click", () => this.remove(b.name));
      this.list.appendChild(el("li", { className: "gx-bookmark" }, open, del));
    }
  }
}

function defaultName(link: LinkState): string {
  return `${link.run} · ${link.tag}${link.selected ? ` · ${link.selected}` : ""}`;
}

function describe(b: Bookmark): string {
  const l = b.link;
  const parts = [`${l.run} · ${l.tag} · ${l.kind ?? "op"}${l.step ? ` · step ${l.step}` : ""}`];
  if (l.expanded?.length) parts.push(`${l.expanded.length} open groups`);
  if (l.selected) parts.push(`selected ${l.selected}`);
  if (l.split) parts.push("split pane");
  if (b.saved) parts.push(`saved ${b.saved}`);
  return parts.join("\n");
}
