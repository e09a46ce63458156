// The package page's "Drivers" panel (BEM 1.5 §13, docs/console.md §Drivers):
// per driver start / pause / stop and a speed slider, its state, phase and
// w, the waveform over one cycle with the phase marker, the material values
// the drivers write, and the 3D preview moving. The semantics are the
// server's (bem::DriverRuntime behind GET /api/packages/{id}/drivers, a
// WebSocket): the panel sends control messages and shows the frames it
// receives; the preview only sets the morph weights each frame carries.
import { wsUrl } from "../api.js";
import { h, mount } from "../ui.js";

const PLOT_W = 180;
const PLOT_H = 48;

function fmt(x, digits = 3) {
  return typeof x === "number" ? x.toFixed(digits) : "–";
}

/** The waveform (the server's samples over one cycle) and a marker at `phase`. */
function plot(canvas, curve, phase, state) {
  const ctx = canvas.getContext("2d");
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== PLOT_W * dpr) {
    canvas.width = PLOT_W * dpr;
    canvas.height = PLOT_H * dpr;
  }
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, PLOT_W, PLOT_H);
  const style = getComputedStyle(canvas);
  const pad = 3;
  const x = (p) => pad + p * (PLOT_W - 2 * pad);
  const y = (w) => PLOT_H - pad - w * (PLOT_H - 2 * pad);
  ctx.strokeStyle = style.getPropertyValue("--border") || "#999";
  ctx.lineWidth = 1;
  ctx.strokeRect(0.5, 0.5, PLOT_W - 1, PLOT_H - 1);
  ctx.strokeStyle = style.getPropertyValue("--accent") || "#36c";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  curve.forEach((w, i) => {
    const px = x(i / (curve.length - 1));
    if (i === 0) ctx.moveTo(px, y(w));
    else ctx.lineTo(px, y(w));
  });
  ctx.stroke();
  if (state === "stopped") return;
  const i = Math.min(curve.length - 1, Math.round(phase * (curve.length - 1)));
  ctx.fillStyle = style.getPropertyValue("--bad") || "#c33";
  ctx.beginPath();
  ctx.arc(x(phase), y(curve[i]), 3.5, 0, 2 * Math.PI);
  ctx.fill();
}

function bindingText(b) {
  if (b.type === "morph_parameter") return `${b.target} (parameter)`;
  if (b.type === "material_keyword") return `${b.keyword} on component ${b.component} slot ${b.material_slot}`;
  return `${b.property} on component ${b.component} slot ${b.material_slot}`;
}

function materialValue(m) {
  if (m.type === "material_keyword") return m.enabled ? "on" : "off";
  if (m.type === "material_color") {
    const [r, g, b, a] = m.value;
    const css = `rgba(${Math.round(r * 255)}, ${Math.round(g * 255)}, ${Math.round(b * 255)}, ${a})`;
    return [h("span", { class: "swatch", style: `background:${css}` }), ` ${m.value.map((c) => fmt(c)).join(", ")}`];
  }
  return fmt(m.value);
}

/**
 * The panel for package `id`, driving `viewer` (whose GLB was loaded with
 * targets=1 for the same selection). `query` is the selection's
 * URLSearchParams; `state` the page's debug object (state.drivers).
 * Returns { element, connect(query), dispose }.
 */
export function driversPanel(id, viewer, state) {
  const body = h("div", { class: "drivers" }, h("p", { class: "muted" }, "Connecting…"));
  const materials = h("div", { class: "drivers-materials" });
  const element = h("section", { class: "panel drivers-panel", "aria-label": "Drivers" },
    h("h2", {}, "Drivers"), body, materials);
  const debug = (state.drivers = { connected: false, header: null, frame: null, frames: 0, errors: [],
    weights: [], sent: [] });
  let ws = null;
  let rows = new Map();
  let closed = false;

  const send = (msg) => {
    if (ws?.readyState !== WebSocket.OPEN) return;
    debug.sent.push(msg);
    ws.send(JSON.stringify(msg));
  };

  const build = (header) => {
    rows = new Map();
    mount(body, header.drivers.map((d) => {
      const canvas = h("canvas", { class: "waveform", width: PLOT_W, height: PLOT_H,
        style: `width:${PLOT_W}px;height:${PLOT_H}px`, "aria-label": `${d.waveform} waveform of ${d.name}` });
      const status = h("span", { class: "driver-state" }, "…");
      const readout = h("span", { class: "small muted" });
      const speedOut = h("output", {}, "1.00×");
      const speed = h("input", { type: "range", min: "0.25", max: "4", step: "0.05", value: "1",
        dataset: { driver: d.id }, "aria-label": `Speed of ${d.name}` });
      speed.addEventListener("input", () => {
        speedOut.textContent = `${Number(speed.value).toFixed(2)}×`;
        send({ action: "speed", driver: d.id, value: Number(speed.value) });
      });
      const button = (action, label) => h("button", { class: "small", dataset: { driver: d.id, action },
        onclick: () => send({ action, driver: d.id }) }, label);
      const row = h("div", { class: "driver", dataset: { driver: d.id } },
        h("div", { class: "driver-head" }, h("strong", {}, d.name), " ", h("code", {}, d.id), " ",
          h("span", { class: "muted small" }, `${d.waveform}, ${d.playback}, ${d.base_frequency} Hz`)),
        h("div", { class: "driver-body" }, canvas,
          h("div", { class: "driver-controls" },
            h("div", { class: "toolbar" }, button("start", "Start"), button("pause", "Pause"), button("stop", "Stop"), status),
            h("label", { class: "control" }, h("span", {}, "Speed"), speed, speedOut), readout)),
        h("ul", { class: "small muted bindings" }, d.bindings.map((b) => h("li", {}, bindingText(b)))));
      rows.set(d.id, { d, canvas, status, readout, speed, speedOut });
      plot(canvas, d.curve, 0, "stopped");
      return row;
    }), header.log.length ? h("details", { class: "small" }, h("summary", {}, `Runtime log (${header.log.length})`),
      h("ul", {}, header.log.map((l) => h("li", {}, l)))) : null);
  };

  const show = (f) => {
    for (const s of f.drivers) {
      const r = rows.get(s.id);
      if (!r) continue;
      r.status.textContent = s.state;
      r.status.dataset.state = s.state;
      r.readout.textContent = `phase ${fmt(s.phase)} · w ${fmt(s.w)}` +
        s.bindings.filter((b) => b.type === "morph_parameter").map((b) => ` · ${b.target} ${b.tick}`).join("");
      if (document.activeElement !== r.speed) {
        r.speed.value = String(s.speed);
        r.speedOut.textContent = `${s.speed.toFixed(2)}×`;
      }
      plot(r.canvas, r.d.curve, s.phase, s.state);
    }
    mount(materials, f.materials.length ? [h("h3", {}, "Material values"),
      h("div", { class: "table-wrap" }, h("table", { class: "records small" }, h("thead", {}, h("tr", {},
        ["Component", "Slot", "Property", "Value", "Source"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, f.materials.map((m) => h("tr", {}, h("td", {}, m.component), h("td", {}, m.material_slot),
        h("td", {}, h("code", {}, m.property ?? m.keyword)), h("td", {}, materialValue(m)), h("td", {}, m.source))))))] : null);
    viewer.setMorphWeights(f.morphs);
    debug.weights = viewer.morphWeights();
  };

  const connect = (query) => {
    ws?.close();
    if (closed) return;
    const q = query?.size ? `?${query}` : "";
    const socket = new WebSocket(wsUrl(`/api/packages/${id}/drivers${q}`));
    ws = socket;
    debug.connected = false;
    socket.onopen = () => {
      if (ws === socket) debug.connected = true;
    };
    socket.onmessage = (ev) => {
      if (ws !== socket) return;
      const msg = JSON.parse(ev.data);
      if (msg.type === "drivers") {
        debug.header = msg;
        build(msg);
      } else if (msg.type === "frame") {
        debug.frame = msg;
        debug.frames++;
        show(msg);
      } else if (msg.type === "error") {
        debug.errors.push(msg);
        body.append(h("p", { class: "error-text" }, `${msg.error}: ${msg.message}`));
      }
    };
    socket.onclose = (ev) => {
      if (ws !== socket || closed) return;
      debug.connected = false;
      body.append(h("p", { class: "error-text" }, `The drivers connection closed${ev.reason ? `: ${ev.reason}` : ""}.`));
    };
  };

  return {
    element,
    connect,
    dispose: () => {
      closed = true;
      ws?.close();
      ws = null;
    },
  };
}
