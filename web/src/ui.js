// Small DOM helpers shared by the pages: an element builder that never
// interprets text as HTML, toasts, and number/date formatting.

/** h("div", {class: "x", onclick: f}, child, "text", [more]) → Element. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces the children of `el`. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A toast in the corner; kind "error" stays until clicked or 8 s pass. */
export function toast(message, kind = "info") {
  const box = document.getElementById("toasts");
  if (!box) return;
  const t = h("div", { class: `toast ${kind}`, role: kind === "error" ? "alert" : "status" }, message);
  t.addEventListener("click", () => t.remove());
  box.append(t);
  setTimeout(() => t.remove(), kind === "error" ? 8000 : 4000);
}

export function formatBytes(n) {
  if (n === null || n === undefined) return "–";
  const units = ["B", "KiB", "MiB", "GiB"];
  let i = 0;
  let v = Number(n);
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function formatTime(ms) {
  if (!ms) return "–";
  return new Date(ms).toLocaleString();
}

/** A state badge: pending/running/done/failed, valid/invalid/unknown. */
export function badge(state) {
  return h("span", { class: `badge state-${state ?? "unknown"}` }, state ?? "unknown");
}

/** The loading placeholder of a page. */
export function loading(text = "Loading…") {
  return h("p", { class: "muted loading", "aria-busy": "true" }, text);
}

/**
 * An error as people read it: a plain sentence, and the error code small
 * beside it (for a search or a bug report). Any thrown value works.
 */
export function errorView(e) {
  const text = e?.sentence?.() ?? (e?.message ? e.message : String(e));
  return h("span", { class: "error-view" }, text, e?.code ? [" ", h("code", { class: "error-code" }, e.code)] : null);
}
