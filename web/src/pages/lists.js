// The dashboard and the asset lists: search, state filter, sort, paging,
// delete, and the drop zone that uploads several files at once.
import { api, upload } from "../api.js";
import { classify, extensionOf } from "../kinds.js";
import { badge, errorView, formatBytes, formatTime, h, loading, mount, toast } from "../ui.js";

export const kinds = {
  models: { title: "Models", state: "intakeState", states: ["pending", "running", "done", "failed"],
    columns: [["format", "Format"], ["vrmVersion", "VRM"], ["skinned", "Skinned"]] },
  motions: { title: "Motions", state: "preprocessState", states: ["pending", "running", "done", "failed"],
    columns: [["format", "Format"], ["frames", "Frames"], ["fps", "fps"], ["durationS", "Seconds"]] },
  packages: { title: "Packages", state: "validity", states: ["unknown", "valid", "invalid"],
    columns: [["container", "Container"], ["bemVersion", "BEM"]] },
};
const finalStates = new Set(["done", "failed", "valid", "invalid"]);

/**
 * Asks, then deletes record `r` of `kind` (its stored files go too); true
 * once it is gone. The lists and the record pages delete through this.
 */
export async function deleteRecord(kind, r) {
  if (!confirm(`Delete ${kind.slice(0, -1)} #${r.id} “${r.originalName}”? Its stored files go too.`)) return false;
  try {
    await api(`/api/${kind}/${r.id}`, { method: "DELETE" });
    toast(`Deleted ${r.originalName}`);
    return true;
  } catch (e) {
    toast(errorView(e), "error");
    return false;
  }
}

/** Calls `fn` now and again while it answers true, 1 s apart growing to 8 s (reset by poke()). */
function poller(fn) {
  let delay = 1000;
  let timer = null;
  let stopped = false;
  const run = async () => {
    timer = null;
    if (stopped) return;
    let again = false;
    try {
      again = await fn();
    } catch {
      again = true;
    }
    if (stopped || !again) return;
    timer = setTimeout(run, delay);
    delay = Math.min(delay * 1.5, 8000);
  };
  return {
    poke() {
      delay = 1000;
      if (timer) clearTimeout(timer);
      timer = setTimeout(run, 300);
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

function cellValue(v) {
  if (v === true) return "yes";
  if (v === false) return "no";
  if (v === null || v === undefined || v === "") return "–";
  if (typeof v === "number" && !Number.isInteger(v)) return v.toFixed(2);
  return String(v);
}

/** The drop zone: drop or choose files, each uploaded to the kind its content says. */
function dropZone(onUploaded) {
  const input = h("input", { type: "file", multiple: true, id: "upload-input", class: "visually-hidden",
    "aria-label": "Choose files to upload" });
  const rows = h("ul", { class: "uploads", "aria-label": "Uploads" });
  const zone = h("div", { class: "dropzone", tabindex: "0", role: "button",
    "aria-describedby": "dropzone-hint" },
  h("strong", {}, "Drop files here"), " or ", h("label", { for: "upload-input", class: "link" }, "choose files"),
  h("p", { class: "muted", id: "dropzone-hint" },
    "Models .vrm .glb .gltf .fbx · motions .bvh .json (and animation-only .glb/.gltf) · packages .bem .zip"),
  input, rows);
  const start = async (files) => {
    for (const file of files) {
      const bar = h("progress", { max: "1", value: "0", "aria-label": `upload of ${file.name}` });
      const status = h("span", { class: "upload-status" }, "…");
      const row = h("li", { class: "upload" }, h("span", { class: "upload-name" }, file.name), bar, status);
      rows.prepend(row);
      let kind = null;
      try {
        kind = await classify(file);
      } catch {
        kind = null;
      }
      if (!kind) {
        row.classList.add("failed");
        mount(status, `charkit takes no .${extensionOf(file.name) || "(no extension)"} files`);
        bar.remove();
        continue;
      }
      mount(status, `${kind}…`);
      upload(kind, file, (f) => (bar.value = f)).then((rec) => {
        row.classList.add("ok");
        mount(status, h("a", { href: `/${kind}/${rec.id}` }, `${kind} #${rec.id}`),
          rec.created === false ? " (already stored)" : "");
        onUploaded?.(kind, rec);
      }, (e) => {
        row.classList.add("failed");
        bar.remove();
        mount(status, errorView(e));
        toast([`${file.name}: `, errorView(e)], "error");
      });
    }
  };
  input.addEventListener("change", () => {
    start([...input.files]);
    input.value = "";
  });
  zone.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      input.click();
    }
  });
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("over");
    start([...(e.dataTransfer?.files ?? [])]);
  });
  return zone;
}

/** Every record of a kind with a state filter (keyset pages of 1000, at most 20 pages). */
async function loadAll(kind, state) {
  const items = [];
  let after = null;
  for (let i = 0; i < 20; i++) {
    const q = new URLSearchParams({ limit: "1000" });
    if (after !== null) q.set("after", after);
    if (state) q.set("state", state);
    const page = await api(`/api/${kind}?${q}`);
    items.push(...page.items);
    if (page.nextAfter === null || page.nextAfter === undefined) return { items, total: page.total };
    after = page.nextAfter;
  }
  return { items, total: items.length, partial: true };
}

export async function dashboardPage({ app, debug }) {
  const tiles = h("div", { class: "tiles" });
  mount(app, h("h1", {}, "Dashboard"), dropZone(() => poll.poke()), tiles);
  const poll = poller(async () => {
    const sections = [];
    let busy = false;
    for (const [kind, k] of Object.entries(kinds)) {
      const page = await api(`/api/${kind}?limit=1000`);
      const recent = page.items.slice(-5).reverse();
      busy ||= page.items.some((r) => !finalStates.has(r[k.state]));
      const counts = {};
      for (const r of page.items) counts[r[k.state]] = (counts[r[k.state]] ?? 0) + 1;
      sections.push(h("section", { class: "tile", dataset: { kind } },
        h("h2", {}, h("a", { href: `/${kind}` }, k.title), h("span", { class: "count" }, page.total)),
        h("p", { class: "state-counts" }, k.states.filter((s) => counts[s]).map((s) => [badge(s), ` ${counts[s]} `])),
        recent.length
          ? h("ul", { class: "recent" }, recent.map((r) => h("li", {},
            h("a", { href: `/${kind}/${r.id}` }, r.originalName), " ", badge(r[k.state]))))
          : h("p", { class: "muted empty" }, `No ${kind} yet: drop files above.`)));
    }
    mount(tiles, sections);
    debug.page = { name: "dashboard" };
    return busy;
  });
  poll.poke();
  return { dispose: () => poll.stop() };
}

export async function listPage({ app, debug, search }, kind) {
  const k = kinds[kind];
  const state = search.get("state") ?? "";
  const view = { q: search.get("q") ?? "", sort: search.get("sort") ?? "id", dir: search.get("dir") ?? "desc",
    page: Math.max(0, Number(search.get("page") ?? 0) || 0), size: 25 };
  const table = h("div", { class: "table-wrap" }, loading());
  const searchBox = h("input", { type: "search", placeholder: "Search names", value: view.q,
    "aria-label": `Search ${kind} by name` });
  const stateSel = h("select", { "aria-label": "Filter by state" },
    h("option", { value: "" }, "All states"), k.states.map((s) => h("option", { value: s, selected: s === state }, s)));
  const pager = h("nav", { class: "pager", "aria-label": "Pages" });
  mount(app, h("h1", {}, k.title), dropZone(() => poll.poke()),
    h("div", { class: "toolbar" }, searchBox, stateSel), table, pager);

  const setQuery = () => {
    const q = new URLSearchParams();
    if (stateSel.value) q.set("state", stateSel.value);
    if (view.q) q.set("q", view.q);
    if (view.sort !== "id") q.set("sort", view.sort);
    if (view.dir !== "desc") q.set("dir", view.dir);
    if (view.page) q.set("page", view.page);
    history.replaceState(null, "", `/${kind}${q.size ? "?" + q : ""}`);
  };
  let data = { items: [], total: 0 };
  const draw = () => {
    const needle = view.q.trim().toLowerCase();
    let rows = data.items.filter((r) => !needle || String(r.originalName).toLowerCase().includes(needle));
    const key = view.sort;
    rows.sort((a, b) => {
      const x = a[key] ?? "";
      const y = b[key] ?? "";
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return view.dir === "asc" ? c : -c;
    });
    const pages = Math.max(1, Math.ceil(rows.length / view.size));
    view.page = Math.min(view.page, pages - 1);
    const shown = rows.slice(view.page * view.size, (view.page + 1) * view.size);
    const sortHeader = (field, label) => h("th", { scope: "col",
      "aria-sort": view.sort === field ? (view.dir === "asc" ? "ascending" : "descending") : "none" },
    h("button", { class: "ghost sort", type: "button", onclick: () => {
      view.dir = view.sort === field && view.dir === "desc" ? "asc" : "desc";
      view.sort = field;
      setQuery();
      draw();
    } }, label, view.sort === field ? (view.dir === "asc" ? " ▲" : " ▼") : ""));
    if (!rows.length) {
      mount(table, h("p", { class: "muted empty" }, data.items.length
        ? "Nothing matches the search." : `No ${kind}${state ? " in state " + state : ""} yet: drop files above.`));
    } else {
      mount(table, h("table", { class: "records" },
        h("thead", {}, h("tr", {}, sortHeader("id", "#"), sortHeader("originalName", "Name"),
          k.columns.map(([f, l]) => sortHeader(f, l)), sortHeader(k.state, "State"), sortHeader("size", "Size"),
          sortHeader("createdAt", "Uploaded"), h("th", { scope: "col" }, h("span", { class: "visually-hidden" }, "Actions")))),
        h("tbody", {}, shown.map((r) => h("tr", { dataset: { id: r.id } },
          h("td", {}, r.id), h("td", {}, h("a", { href: `/${kind}/${r.id}` }, r.originalName)),
          k.columns.map(([f]) => h("td", {}, cellValue(r[f]))),
          h("td", {}, badge(r[k.state]), r.error ? h("div", { class: "error-text small" }, r.error) : null),
          h("td", {}, formatBytes(r.size)), h("td", {}, formatTime(r.createdAt)),
          h("td", {}, h("button", { class: "danger small", type: "button", "aria-label": `Delete ${r.originalName}`,
            onclick: () => remove(r) }, "Delete")))))));
    }
    mount(pager, h("button", { type: "button", disabled: view.page === 0, onclick: () => {
      view.page--;
      setQuery();
      draw();
    } }, "‹ Previous"), h("span", {}, ` page ${view.page + 1} of ${pages} · ${rows.length} of ${data.total} `),
    h("button", { type: "button", disabled: view.page >= pages - 1, onclick: () => {
      view.page++;
      setQuery();
      draw();
    } }, "Next ›"));
    debug.page = { name: "list", kind, rows: shown.map((r) => ({ id: r.id, name: r.originalName, state: r[k.state] })) };
  };
  const remove = async (r) => {
    if (await deleteRecord(kind, r)) poll.poke();
  };
  const poll = poller(async () => {
    data = await loadAll(kind, stateSel.value);
    draw();
    return data.items.some((r) => !finalStates.has(r[k.state]));
  });
  searchBox.addEventListener("input", () => {
    view.q = searchBox.value;
    view.page = 0;
    setQuery();
    draw();
  });
  stateSel.addEventListener("change", () => {
    view.page = 0;
    setQuery();
    poll.poke();
  });
  poll.poke();
  return { dispose: () => poll.stop() };
}
