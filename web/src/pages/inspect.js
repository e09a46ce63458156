// The model page's inspection tabs (docs/console.md §Model page): the VRM
// expressions with a slider each that drives the viewer, the glTF node tree
// whose selection the viewer outlines, and the VRM licence in plain words.
// What they show is worked out in ../vrminfo.js.
import { h, mount } from "../ui.js";
import { licence, nodeTree, sortExpressions, vrm0GroupNames } from "../vrminfo.js";

/**
 * Tabs: `list` of [key, label, content]; the first is shown. Arrow keys move
 * between tabs. Returns the element; element.show(key) switches.
 */
export function tabs(list, name) {
  const bar = h("div", { class: "tabs", role: "tablist", "aria-label": name });
  const panels = [];
  const buttons = list.map(([key, label, content], i) => {
    const panel = h("section", { class: "tab-panel", role: "tabpanel", id: `tab-${key}`, "aria-labelledby": `tab-${key}-button`,
      hidden: i !== 0 }, content);
    panels.push(panel);
    return h("button", { type: "button", role: "tab", id: `tab-${key}-button`, "data-tab": key, "aria-controls": `tab-${key}`,
      "aria-selected": i === 0 ? "true" : "false", tabindex: i === 0 ? "0" : "-1", onclick: () => show(key) }, label);
  });
  const element = h("div", { class: "tabbed" }, bar, panels);
  function show(key) {
    list.forEach(([k], i) => {
      const on = k === key;
      buttons[i].setAttribute("aria-selected", on ? "true" : "false");
      buttons[i].tabIndex = on ? 0 : -1;
      panels[i].hidden = !on;
    });
  }
  bar.addEventListener("keydown", (e) => {
    const i = buttons.indexOf(document.activeElement);
    if (i < 0 || (e.key !== "ArrowRight" && e.key !== "ArrowLeft")) return;
    const next = buttons[(i + (e.key === "ArrowRight" ? 1 : buttons.length - 1)) % buttons.length];
    next.focus();
    next.click();
    e.preventDefault();
  });
  bar.append(...buttons);
  element.show = show;
  return element;
}

function expressionRow(manager, name, fileName) {
  const e = manager.getExpression(name);
  const out = h("output", {}, "0.00");
  const input = h("input", { type: "range", min: "0", max: "1", step: "0.01", value: "0", "data-expression": name,
    "aria-label": `Expression ${name}` });
  input.addEventListener("input", () => {
    manager.setValue(name, Number(input.value));
    out.value = Number(input.value).toFixed(2);
  });
  const notes = [fileName && fileName !== name ? fileName : null, e?.isBinary ? "binary" : null].filter(Boolean);
  return h("label", { class: "expression" }, h("span", { class: "expression-name" }, name,
    notes.length ? h("span", { class: "muted" }, ` (${notes.join(", ")})`) : null), input, out);
}

/**
 * The expressions of the loaded VRM (three-vrm's expression manager: VRM
 * 1.0 expressions, VRM 0.x blend shape groups), presets then custom ones,
 * a slider (0–1) each that sets the expression's weight, and a reset.
 * `state.expressions` lists them with their weights now.
 */
export function expressionsPanel(viewer, state) {
  const manager = viewer.vrm?.expressionManager;
  const names = manager ? manager.expressions.map((e) => e.expressionName) : [];
  if (!names.length) return h("p", { class: "muted" }, "This VRM has no expressions.");
  const presetMap = manager.presetExpressionMap;
  const { presets, custom } = sortExpressions(names, (n) => n in presetMap);
  const fileNames = vrm0GroupNames(viewer.gltf?.parser?.json);
  const list = (title, group) => [h("h3", {}, `${title} (${group.length})`),
    group.length ? h("div", { class: "expressions" }, group.map((n) => expressionRow(manager, n, fileNames.get(n))))
      : h("p", { class: "muted small" }, "None.")];
  const body = h("div", {}, list("Presets", presets), list("Custom", custom));
  const reset = h("button", { type: "button", class: "small expressions-reset" }, "All to 0");
  reset.addEventListener("click", () => {
    manager.resetValues();
    for (const input of body.querySelectorAll("input[data-expression]")) input.value = "0";
    for (const out of body.querySelectorAll("output")) out.value = "0.00";
  });
  state.expressions = [...presets, ...custom].map((name) => ({ name, preset: name in presetMap,
    get value() { return manager.getValue(name); } }));
  return h("div", {}, h("p", { class: "small muted" }, "Each slider sets an expression's weight (0–1) in the view. ",
    "VRM 0.x blend shape groups go by their VRM 1.0 names, the file's name beside."),
  h("div", { class: "toolbar" }, reset), body);
}

function nodeLabel(n) {
  const marks = [...n.marks, n.humanoid ? `humanoid ${n.humanoid}` : null].filter(Boolean);
  return [n.name ?? h("i", { class: "muted" }, `node ${n.index}`),
    marks.map((m) => h("span", { class: `mark mark-${m.split(" ")[0]}` }, m))];
}

/**
 * The glTF node tree of the loaded file. Selecting a node outlines it in
 * the viewer; selecting it again or "None" clears that. `state.nodes` is
 * the count listed, `state.selected` {index, name} or null.
 */
export function nodesPanel(viewer, state) {
  const tree = nodeTree(viewer.gltf?.parser?.json);
  const objects = viewer.nodeObjects();
  const buttons = new Map();
  const shown = h("span", {}, "none");
  const none = h("button", { type: "button", class: "small node-none", disabled: true }, "None");
  state.nodes = tree.count;
  state.selected = null;
  const select = (i) => {
    const next = state.selected?.index === i ? null : i;
    buttons.get(state.selected?.index)?.setAttribute("aria-pressed", "false");
    if (next === null) {
      state.selected = null;
      viewer.highlight(null);
    } else {
      const n = viewer.gltf.parser.json.nodes[next];
      state.selected = { index: next, name: n.name ?? null };
      buttons.get(next).setAttribute("aria-pressed", "true");
      viewer.highlight(objects.get(next));
    }
    mount(shown, state.selected ? (state.selected.name ?? `node ${next}`) : "none");
    none.disabled = !state.selected;
  };
  none.addEventListener("click", () => state.selected && select(state.selected.index));
  const item = (n) => {
    const inScene = objects.has(n.index);
    const b = h("button", { type: "button", class: "node", "data-node": n.index, "aria-pressed": "false",
      disabled: !inScene, title: inScene ? null : "not in the scene shown", onclick: () => select(n.index) }, nodeLabel(n));
    buttons.set(n.index, b);
    return h("li", {}, b, n.children.length ? h("ul", {}, n.children.map(item)) : null);
  };
  return h("div", {},
    h("p", { class: "small" }, `${tree.count} node${tree.count === 1 ? "" : "s"}. Selected: `, shown, " ", none),
    h("div", { class: "node-tree" }, h("ul", { "aria-label": "Nodes of the scene" }, tree.roots.map(item)),
      tree.detached.length ? [h("p", { class: "small muted" }, "Not in the scene:"),
        h("ul", { "aria-label": "Nodes not in the scene" }, tree.detached.map(item))] : null));
}

function linkOr(text, url) {
  return url ? h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, text) : text;
}

/**
 * The VRM licence as the file states it (VRM 1.0 meta or VRM 0.x meta), in
 * plain words, with the model's author, version and contact facts.
 * `state.licence` holds the rows ({field, value, text}).
 */
export function licencePanel(meta, state) {
  const l = licence(meta);
  if (!l) return h("p", { class: "muted" }, "This VRM has no meta.");
  state.licence = l.rows.map(({ field, value, text }) => ({ field, value, text }));
  const rows = l.rows.map((r) => [h("dt", {}, r.label),
    h("dd", { "data-field": r.field, "data-value": r.stated ? String(r.value) : null },
      linkOr(r.text, r.url), r.note ? h("span", { class: "muted small" }, ` (${r.note})`) : null)]);
  return h("div", {},
    h("h3", {}, "About the model"),
    h("dl", { class: "facts" }, l.facts.map(([k, v, url]) => [h("dt", {}, k), h("dd", {}, linkOr(v, url))])),
    h("h3", {}, `Permissions (${l.version} meta)`),
    h("dl", { class: "facts licence" }, rows),
    h("p", { class: "small muted" }, "As the file states them; the licence document is what binds."));
}
