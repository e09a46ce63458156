// The package page: the validation report, rendered like the Khronos glTF
// validator's web report (counts by severity, issues grouped by severity
// then code, each with its spec section and location), filterable.
import { api, ApiError, fetchResponse } from "../api.js";
import { countIssues, filterIssues, groupIssues, locationOf, severities } from "../report.js";
import { badge, errorView, formatBytes, formatTime, h, loading, mount, toast } from "../ui.js";
import { Viewer } from "../viewer.js";
import { driversPanel } from "./drivers.js";

function facts(rows) {
  return h("dl", { class: "facts" }, rows.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "–")]));
}

async function waitForReport(rec, status, isStopped) {
  let delay = 500;
  for (;;) {
    try {
      return await api(`/api/packages/${rec.id}/report`);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 409 || isStopped()) throw e;
      mount(status, loading("Validating… the report appears when the job has finished."));
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 1.5, 5000);
    }
  }
}

export async function packagePage({ app, debug, stale }, id) {
  const rec = await api(`/api/packages/${id}`);
  const status = h("div", {});
  const body = h("div", {});
  mount(app, h("p", { class: "crumbs" }, h("a", { href: "/packages" }, "Packages"), " / ", `#${rec.id}`),
    h("h1", {}, rec.originalName, " ", badge(rec.validity)), status, body);
  debug.page = { name: "package", id, report: null, codes: [] };
  const report = await waitForReport(rec, status, stale);
  if (stale()) return null;
  mount(status);
  const messages = report.issues?.messages ?? [];
  const counts = countIssues(messages);
  debug.page.report = report;
  debug.page.codes = [...new Set(messages.map((m) => m.code))].sort();

  const shown = new Set(severities);
  const text = h("input", { type: "search", placeholder: "Filter by code, message or location",
    "aria-label": "Filter issues" });
  const list = h("div", { class: "issues" });
  const boxes = severities.map((s) => {
    const box = h("input", { type: "checkbox", checked: true, dataset: { severity: s } });
    box.addEventListener("change", () => {
      if (box.checked) shown.add(s);
      else shown.delete(s);
      draw();
    });
    return h("label", { class: `sev-toggle sev-${s}` }, box, ` ${s}s `, h("span", { class: "count" }, counts[s]));
  });
  const draw = () => {
    const groups = groupIssues(filterIssues(messages, { text: text.value, shown }));
    if (!messages.length) {
      mount(list, h("p", { class: "empty ok-text" }, "No issues: the package is valid."));
      return;
    }
    if (!groups.length) {
      mount(list, h("p", { class: "muted empty" }, "No issue matches the filter."));
      return;
    }
    mount(list, groups.map((g) => h("section", { class: `sev-group sev-${g.severity}` },
      h("h3", {}, `${g.severity[0].toUpperCase()}${g.severity.slice(1)}s (${g.count})`),
      g.codes.map((c) => h("details", { class: "code-group", open: true, dataset: { code: c.code } },
        h("summary", {}, h("code", {}, c.code), c.section ? h("span", { class: "section" }, ` ${c.section.startsWith("§") ? "" : "§"}${c.section}`) : null,
          h("span", { class: "count" }, ` ${c.items.length}`)),
        h("ul", {}, c.items.map((m) => h("li", {}, h("span", { class: "msg" }, m.message),
          locationOf(m) ? h("code", { class: "loc" }, locationOf(m)) : null))))))));
  };
  text.addEventListener("input", draw);
  const reportFacts = [
    ["Container", report.container], ["Declared version", report.declaredVersion],
    ["Effective version", report.effectiveVersion], ["Needed version", report.neededVersion],
    ["Payloads", report.payloadCount],
    // Members are the packages of a collection bundle, not a ZIP's entries.
    report.container === "collection" ? ["Members", Array.isArray(report.members) ? report.members.length : report.members] : null,
    // Every ZIP entry (the manifest included) and zstd payload decoded to validate.
    ["Decoded while validating", formatBytes(report.decodedBytes)], ["Size", formatBytes(rec.size)],
    ["Uploaded", formatTime(rec.createdAt)],
  ];
  mount(body,
    h("div", { class: "severity-counts" }, severities.map((s) => h("div", { class: `sev-count sev-${s}` },
      h("span", { class: "n" }, counts[s]), ` ${s}${counts[s] === 1 ? "" : "s"}`))),
    report.issues?.truncated ? h("p", { class: "warning-text" }, "The report was cut at the issue limit.") : null,
    report.budget ? h("p", { class: "error-text" }, `${report.budget.code}: ${report.budget.message}`) : null,
    h("div", { class: "split" }, h("div", {}, h("h2", {}, "Issues"), h("div", { class: "toolbar" }, boxes, text), list),
      h("aside", { class: "panel" }, h("h2", {}, "Package"), facts(reportFacts),
        h("p", {}, h("a", { href: rec.contentUrl, download: rec.originalName }, "Download the package"), " · ",
          h("a", { href: rec.reportUrl }, "Report JSON")))));
  draw();
  let summary = null;
  try {
    summary = await api(`/api/packages/${id}/summary`);
  } catch (e) {
    toast(["Summary: ", errorView(e)], "error");
  }
  if (stale()) return null;
  debug.page.summary = summary;
  const preview = summary && report.valid ? previewSection(id, summary, debug.page) : null;
  if (summary?.readable === false) {
    body.append(h("h2", {}, "Contents"), h("p", { class: "muted" }, "The container could not be opened: there are no contents to show."));
  } else if (summary) {
    body.append(...summarySection(summary, report.valid ? id : null));
  }
  if (preview) body.prepend(preview.element);
  return preview ? { dispose: () => preview.dispose() } : null;
}

function table(columns, rows) {
  return h("div", { class: "table-wrap" }, h("table", { class: "records" },
    h("thead", {}, h("tr", {}, columns.map(([, label]) => h("th", { scope: "col" }, label)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, columns.map(([key, , fmt]) =>
      h("td", {}, fmt ? fmt(r[key], r) : r[key] ?? "–")))))));
}

const ratio = (v) => (typeof v === "number" ? `${(v * 100).toFixed(1)} %` : "–");
const list = (v) => (Array.isArray(v) ? v.length : v ?? "–");

/** A package target (§4) in words: its scalar fields, "key value" joined by " · " (components are counted apart). */
export function targetText(t) {
  if (!t || typeof t !== "object") return "–";
  const parts = Object.entries(t).filter(([k, v]) => k !== "components" && v !== "" && v !== null && typeof v !== "object")
    .map(([k, v]) => `${k} ${v}`);
  return parts.length ? parts.join(" · ") : "–";
}

/**
 * What the package holds (bem inspect's JSON): package, options, parameters,
 * meshes, textures (with thumbnails decoded by the server when `thumbsOf`,
 * the package id, is given: valid packages only), payloads.
 */
function summarySection(s, thumbsOf) {
  const out = [h("h2", {}, "Contents")];
  const pkg = s.package ?? {};
  out.push(h("dl", { class: "facts wide" }, [
    ["Package", [pkg.name, pkg.id].filter(Boolean).join(" · ") || "–"], ["Author", pkg.author], ["Version", pkg.version],
    ["Capabilities", Array.isArray(s.capabilities) ? s.capabilities.join(", ") || "none" : s.capabilities],
    ["Target", targetText(s.target)], ["Components", list(s.target?.components)],
    ["Meshes", list(s.meshes)], ["Textures", list(s.textures)], ["Drivers", list(s.drivers)],
  ].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "–")])));
  if (s.optionGroups?.length) {
    out.push(h("h3", {}, "Options"), table([["id", "Group"], ["name", "Name"], ["default", "Default"],
      ["choices", "Choices", (c) => (c ?? []).map((x) => x.id).join(", ")],
      ["conditional", "Conditional", (v) => (v ? "yes" : "no")]], s.optionGroups));
  }
  if (s.parameters?.length) {
    out.push(h("h3", {}, "Parameters"), table([["id", "Parameter"], ["name", "Name"], ["min", "Min"], ["max", "Max"],
      ["step", "Step"], ["neutral", "Neutral"], ["default", "Default"]], s.parameters));
  }
  if (s.textures?.length) {
    const thumb = thumbsOf === null ? [] : [["index", "Preview", (i) => h("img", { class: "thumb", loading: "lazy",
      alt: `texture ${i}`, src: `/api/packages/${thumbsOf}/textures/${i}.png?size=64` })]];
    s.textures.forEach((t, i) => (t.index ??= i));
    out.push(h("h3", {}, "Textures"), table([...thumb, ["originalName", "Texture", (v, r) => v ?? r.id ?? `#${r.index}`], ["width", "Width"], ["height", "Height"], ["mips", "Mips"],
      ["formatName", "Format", (v, r) => v ?? r.format], ["srgb", "sRGB", (v) => (v ? "yes" : "no")], ["payload", "Payload"]],
    s.textures));
  }
  if (s.payloads?.length) {
    out.push(h("h3", {}, `Payloads (${s.payloadTotals?.count ?? s.payloads.length}, ` +
      `${formatBytes(s.payloadTotals?.storedSize)} stored, ${formatBytes(s.payloadTotals?.decodedSize)} decoded)`),
    table([["id", "Payload"], ["codec", "Codec"], ["storedSize", "Stored", formatBytes],
      ["decodedSize", "Decoded", formatBytes], ["ratio", "Ratio", ratio]], s.payloads));
  }
  return out;
}

/**
 * The 3D preview of one selection: a selector per option group, a slider
 * per parameter (1.3+), the GLB of `export.glb` for the selection shown in
 * a Viewer, the normalised strings and the normalisation notes. A package
 * with drivers (1.5) gets the Drivers panel: its GLB carries the §10
 * channels as morph targets (targets=1) whose weights the drivers set.
 */
function previewSection(id, s, state) {
  const stage = h("div", { class: "stage", "aria-label": "Preview of the selection (drag to orbit)" });
  const notes = h("div", { class: "notes small" });
  const controls = h("div", { class: "controls" });
  const selects = (s.optionGroups ?? []).map((g) => {
    const sel = h("select", { dataset: { group: g.id }, "aria-label": `Option ${g.name ?? g.id}` },
      (g.choices ?? []).map((c) => h("option", { value: c.id, selected: c.id === g.default }, c.name ? `${c.name} (${c.id})` : c.id)));
    controls.append(h("label", { class: "control" }, h("span", {}, g.name ?? g.id), sel));
    return sel;
  });
  const sliders = (s.parameters ?? []).map((p) => {
    const out = h("output", {}, String(p.default ?? p.neutral ?? p.min ?? 0));
    const input = h("input", { type: "range", min: String(p.min ?? 0), max: String(p.max ?? 0), step: String(p.step || 1),
      value: String(p.default ?? p.neutral ?? p.min ?? 0), dataset: { parameter: p.id }, "aria-label": `Parameter ${p.name ?? p.id}` });
    input.addEventListener("input", () => (out.textContent = input.value));
    controls.append(h("label", { class: "control" }, h("span", {}, p.name ?? p.id), input, out));
    return input;
  });
  const viewer = new Viewer(stage);
  const hasDrivers = Array.isArray(s.drivers) ? s.drivers.length > 0 : s.drivers > 0;
  const drivers = hasDrivers ? driversPanel(id, viewer, state) : null;
  state.preview = { loads: 0, options: null, parameters: null, warnings: [], stats: null, error: null, busy: false };
  Object.defineProperty(state.preview, "camera", { enumerable: true, get: () => viewer.camera.position.toArray() });
  const reframe = h("button", { type: "button", class: "small" }, "Frame model");
  reframe.addEventListener("click", () => viewer.frame());
  let timer = null;
  let seq = 0;
  const load = async () => {
    const mine = ++seq;
    const options = selects.map((x) => `${x.dataset.group}:${x.value}`).join("&");
    const parameters = sliders.map((x) => `${x.dataset.parameter}:${x.value}`).join("&");
    const q = new URLSearchParams();
    if (options) q.set("options", options);
    if (parameters) q.set("parameters", parameters);
    state.preview.busy = true;
    const glbQuery = new URLSearchParams(q);
    if (drivers) glbQuery.set("targets", "1");
    try {
      const r = await fetchResponse(`/api/packages/${id}/export.glb${glbQuery.size ? "?" + glbQuery : ""}`);
      const selection = JSON.parse(r.headers.get("X-Charkit-Selection") ?? "{}");
      const bytes = await r.arrayBuffer();
      if (mine !== seq) return;
      // Framed once: a later selection keeps the user's view ("Frame model" frames again).
      const stats = await viewer.load(bytes, { frame: state.preview.loads === 0 });
      if (mine !== seq) return;
      drivers?.connect(q);  // the runtime of this selection, its morph weights for this GLB
      Object.assign(state.preview, { loads: state.preview.loads + 1, options: selection.options,
        parameters: selection.parameters, warnings: selection.warnings ?? [], stats, error: null });
      mount(notes, h("p", {}, "Options ", h("code", {}, selection.options || "(none)"),
        selection.parameters ? [" · parameters ", h("code", {}, selection.parameters)] : null,
        ` · ${stats.triangles.toLocaleString()} triangles`),
      (selection.warnings ?? []).map((w) => h("p", { class: "warning-text" }, `${w.code}: ${w.message}`)),
      selection.warningCount > (selection.warnings ?? []).length
        ? h("p", { class: "muted" }, `… ${selection.warningCount - selection.warnings.length} more`) : null);
    } catch (e) {
      if (mine !== seq) return;
      state.preview.error = e.describe?.() ?? String(e);
      mount(notes, h("p", { class: "error-text" }, "Preview failed: ", errorView(e)));
    } finally {
      if (mine === seq) state.preview.busy = false;
    }
  };
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(load, 250);
  };
  for (const x of [...selects, ...sliders]) x.addEventListener("change", schedule);
  load();
  return {
    element: h("section", { class: "preview" }, h("h2", {}, "Preview"),
      // The drivers beside the model they move, under the selection.
      h("div", { class: "split" }, h("div", { class: "viewer-col" }, stage, h("div", { class: "toolbar" }, reframe), notes),
        h("div", { class: "side-col" }, h("aside", { class: "panel" },
          h("h2", {}, "Selection"), controls.childElementCount ? controls : h("p", { class: "muted" }, "No options or parameters.")),
        drivers?.element))),
    dispose: () => {
      clearTimeout(timer);
      seq++;
      drivers?.dispose();
      viewer.dispose();
    },
  };
}
