// The model page: an orbitable 3D view of the model, its intake record and
// scene facts, and once loaded the inspection tabs of pages/inspect.js
// (node tree; for VRM the expressions and the licence).
import { api, fetchBytes } from "../api.js";
import { badge, formatBytes, formatTime, h, loading, mount, toast } from "../ui.js";
import { Viewer } from "../viewer.js";
import { expressionsPanel, licencePanel, nodesPanel, tabs } from "./inspect.js";

function facts(rows) {
  return h("dl", { class: "facts" }, rows.filter(Boolean).map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "–")]));
}

/** The side panel's tabs once the model is loaded: facts, then (VRM) expressions, nodes, (VRM) licence. */
function inspection(viewer, about, state) {
  const list = [["facts", "Facts", about]];
  if (viewer.vrm) list.push(["expressions", "Expressions", expressionsPanel(viewer, state)]);
  list.push(["nodes", "Nodes", nodesPanel(viewer, state)]);
  if (viewer.vrm) list.push(["licence", "Licence", licencePanel(viewer.vrm.meta, state)]);
  return tabs(list, "Model details");
}

export async function modelPage({ app, debug, stale }, id) {
  const rec = await api(`/api/models/${id}`);
  const stage = h("div", { class: "stage", "aria-label": "3D view (drag to orbit, wheel to zoom)" });
  const side = h("aside", { class: "panel" });
  const skeleton = h("input", { type: "checkbox", id: "toggle-skeleton" });
  const wire = h("input", { type: "checkbox", id: "toggle-wireframe" });
  const reset = h("button", { type: "button", class: "small" }, "Frame model");
  mount(app, h("p", { class: "crumbs" }, h("a", { href: "/models" }, "Models"), " / ", `#${rec.id}`),
    h("h1", {}, rec.name || rec.originalName, " ", badge(rec.intakeState)),
    h("div", { class: "split" }, h("div", { class: "viewer-col" }, stage,
      h("div", { class: "toolbar" }, h("label", {}, skeleton, " Skeleton"), h("label", {}, wire, " Wireframe"), reset)),
    side));
  const record = [
    ["File", rec.originalName], ["Format", rec.format], ["Size", formatBytes(rec.size)],
    ["Intake", badge(rec.intakeState)], rec.error ? ["Error", h("span", { class: "error-text" }, rec.error)] : null,
    ...(rec.intakeState === "done" ? [["VRM version", rec.vrmVersion], ["Title", rec.name || null],
      ["Skinned", rec.skinned === null ? "–" : rec.skinned ? "yes" : "no"],
      ["Humanoid bones", Array.isArray(rec.humanoidBones) ? rec.humanoidBones.length : rec.humanoidBones]] : []),
    ["Uploaded", formatTime(rec.createdAt)], ["SHA-256", h("code", { class: "hash" }, rec.sha256)],
  ];
  const about = h("div", {}, h("h2", {}, "Intake record"), facts(record),
    h("p", {}, h("a", { href: rec.contentUrl, download: rec.originalName }, "Download the file")));
  mount(side, about);
  debug.page = { name: "model", id, format: rec.format, loaded: false, stats: null, error: null };

  if (rec.intakeState === "failed") {
    // The file could not be read as a model: the reason, not a preview attempt.
    mount(stage, h("div", { class: "empty" }, h("p", { class: "error-text" }, `Intake failed: ${rec.error ?? "no reason was recorded"}`),
      h("p", {}, "charkit could not read this file as a model, so there is no preview. The record is on the right.")));
    debug.page.error = rec.error ?? "intake failed";
    return null;
  }
  if (rec.format === "fbx") {
    mount(stage, h("div", { class: "empty" }, h("p", {}, "No 3D preview for FBX files: the browser has no FBX reader here. "
      + "The intake record is on the right.")));
    return null;
  }
  mount(stage, loading("Loading the model…"));
  const viewer = new Viewer(stage);
  stage.querySelector(".loading")?.remove();
  debug.page.viewer = { get frames() { return viewer.frames; } };
  Object.defineProperties(debug.page, {
    morphs: { enumerable: true, get: () => viewer.morphsByMesh() },
    highlighted: { enumerable: true, get: () => viewer.highlightedNode() },
  });
  const load = async () => {
    try {
      const bytes = await fetchBytes(rec.contentUrl);
      if (stale()) return;
      const stats = await viewer.load(bytes);
      if (stale()) return;
      debug.page.stats = stats;
      const scene = [
        ["Meshes", stats.meshes], ["Primitives", stats.primitives], ["Triangles", stats.triangles.toLocaleString()],
        ["Materials", stats.materials], ["Textures", stats.textures], ["Morph targets", stats.morphTargets],
        ["Skins", stats.skins], ["Joints", stats.joints],
      ];
      const extra = [h("h2", {}, "Scene"), facts(scene)];
      if (stats.vrm) {
        const v = stats.vrm;
        extra.push(h("h2", {}, `VRM ${v.version}`), facts([["Title", v.title], ["Author", v.author], ["Licence", v.licence],
          ["Humanoid bones", `${v.bones.length} found`], ["Expressions", v.expressions],
          ["Required bones missing", v.missing.length ? v.missing.join(", ") : "none"]]));
        extra.push(h("details", {}, h("summary", {}, "Bones found"), h("p", { class: "small" }, v.bones.join(", "))));
      }
      about.append(...extra);
      mount(side, inspection(viewer, about, debug.page));
      debug.page.loaded = true;
    } catch (e) {
      debug.page.error = String(e?.message ?? e);
      mount(stage, h("div", { class: "empty error-text" }, `The preview failed: ${debug.page.error}`));
      toast(`Preview of ${rec.originalName} failed: ${debug.page.error}`, "error");
    }
  };
  load();
  skeleton.addEventListener("change", () => viewer.setSkeleton(skeleton.checked));
  wire.addEventListener("change", () => viewer.setWireframe(wire.checked));
  reset.addEventListener("click", () => viewer.frame());
  return { dispose: () => viewer.dispose() };
}
