// The motion page (playback of the keypoint stream with its controls and
// the joint angles over time) and the live page (a channel's frames).
import { api, ApiError, wsUrl } from "../api.js";
import { ANGLE_NAMES, EDGES, confidenceClass, decodeFrame, readAngles } from "../keypoints.js";
import { badge, errorView, formatBytes, formatTime, h, loading, mount, toast } from "../ui.js";
import { AvatarView } from "./avatar.js";
import { deleteRecord } from "./lists.js";

const colours = { measured: "#2e9d5b", estimated: "#d99a1e", missing: "#d0453c" };
const angleColours = ["#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#eeca3b", "#b279a2", "#ff9da6", "#9d755d"];

/** Draws one frame's 33 points and 35 edges on a 2D canvas (image coordinates, y down). */
export function drawSkeleton(canvas, frame) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width;
  const hgt = canvas.height;
  ctx.clearRect(0, 0, w, hgt);
  if (!frame) return;
  const side = Math.min(w, hgt);
  const ox = (w - side) / 2;
  const oy = (hgt - side) / 2;
  const at = (p) => [ox + p[0] * side, oy + p[1] * side];
  ctx.lineWidth = 3;
  ctx.lineCap = "round";
  for (const [a, b] of EDGES) {
    const pa = frame.points[a];
    const pb = frame.points[b];
    const missing = pa[3] === 0 || pb[3] === 0;
    ctx.strokeStyle = missing ? "rgba(208,69,60,0.35)" : "rgba(120,140,160,0.9)";
    ctx.setLineDash(missing || pa[3] < 0.9 || pb[3] < 0.9 ? [6, 5] : []);
    ctx.beginPath();
    ctx.moveTo(...at(pa));
    ctx.lineTo(...at(pb));
    ctx.stroke();
  }
  ctx.setLineDash([]);
  for (const p of frame.points) {
    const [x, y] = at(p);
    ctx.fillStyle = colours[confidenceClass(p[3])];
    ctx.beginPath();
    ctx.arc(x, y, p[3] === 0 ? 3 : 5, 0, Math.PI * 2);
    ctx.fill();
  }
}

/** Plots the 9 joint angles (degrees, acos of the cosines) over time, with a cursor at `frame`. */
const PLOT_PAD = 28;
/** The plot's x of a frame, in canvas pixels. */
const plotX = (w, frames, f) => PLOT_PAD + (f / Math.max(1, frames - 1)) * (w - PLOT_PAD - 8);

/**
 * Draws the nine curves once, into a canvas of the chart's size kept off
 * screen; drawCursor() then copies it and adds the cursor, so a frame costs
 * one copy rather than nine curves of the whole motion.
 */
function drawAngles(canvas, series, frames) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width;
  const hgt = canvas.height;
  ctx.clearRect(0, 0, w, hgt);
  const pad = PLOT_PAD;
  const x = (f) => plotX(w, frames, f);
  const y = (deg) => hgt - pad - (deg / 180) * (hgt - pad - 8);
  ctx.strokeStyle = "rgba(128,128,128,0.3)";
  ctx.fillStyle = "rgba(128,128,128,0.9)";
  ctx.font = "11px system-ui, sans-serif";
  for (const deg of [0, 45, 90, 135, 180]) {
    ctx.beginPath();
    ctx.moveTo(pad, y(deg));
    ctx.lineTo(w - 8, y(deg));
    ctx.stroke();
    ctx.fillText(`${deg}°`, 2, y(deg) + 4);
  }
  for (let a = 0; a < 9; a++) {
    ctx.strokeStyle = angleColours[a];
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    series.forEach((s, i) => {
      const deg = (Math.acos(Math.max(-1, Math.min(1, s.angles[a]))) * 180) / Math.PI;
      if (i === 0) ctx.moveTo(x(s.frame), y(deg));
      else ctx.lineTo(x(s.frame), y(deg));
    });
    ctx.stroke();
  }
}

/** The chart: the curves drawn once (`plot`, may be null) and the cursor at `frame`. */
function drawCursor(chart, plot, frames, frame) {
  const ctx = chart.getContext("2d");
  ctx.clearRect(0, 0, chart.width, chart.height);
  if (plot) ctx.drawImage(plot, 0, 0);
  if (frame === null || frame === undefined) return;
  const x = plotX(chart.width, frames, frame);
  ctx.strokeStyle = "#888";
  ctx.lineWidth = 1;
  ctx.beginPath();
  ctx.moveTo(x, 8);
  ctx.lineTo(x, chart.height - PLOT_PAD);
  ctx.stroke();
}

function legend() {
  return h("ul", { class: "legend" },
    ANGLE_NAMES.map((n, i) => h("li", {}, h("span", { class: "swatch", style: `background:${angleColours[i]}` }), n)),
    h("li", {}, h("span", { class: "swatch dot", style: `background:${colours.measured}` }), "measured"),
    h("li", {}, h("span", { class: "swatch dot", style: `background:${colours.estimated}` }), "estimated"),
    h("li", {}, h("span", { class: "swatch dot", style: `background:${colours.missing}` }), "missing"));
}

async function waitUntilDone(id, status, stale) {
  let delay = 500;
  for (;;) {
    const rec = await api(`/api/motions/${id}`);
    if (rec.preprocessState === "done" || rec.preprocessState === "failed" || stale()) return rec;
    mount(status, loading(`Preprocessing (${rec.preprocessState})…`));
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 1.5, 5000);
  }
}

/** The ?avatar= model id of the URL, or null. */
function avatarParam(search) {
  const v = Number(search.get("avatar"));
  return Number.isInteger(v) && v > 0 ? v : null;
}

/** Keeps ?avatar= in the URL in step with the avatar chosen. */
function rememberAvatar(id) {
  const q = new URLSearchParams(location.search);
  if (id === null) q.delete("avatar");
  else q.set("avatar", String(id));
  history.replaceState(null, "", `${location.pathname}${q.size ? "?" + q : ""}`);
}

export async function motionPage({ app, debug, navigate, stale, search }, id) {
  const status = h("div", {});
  let rec = await api(`/api/motions/${id}`);
  mount(app, h("p", { class: "crumbs" }, h("a", { href: "/motions" }, "Motions"), " / ", `#${rec.id}`),
    h("h1", {}, rec.originalName, " ", badge(rec.preprocessState)), status);
  debug.page = { name: "motion", id, state: null, frame: null, frames: rec.frames, received: 0, header: null };
  rec = await waitUntilDone(id, status, stale);
  if (stale()) return null;
  mount(status);
  if (rec.preprocessState !== "done") {
    // Nothing to play: the reason, the record, the file and a way to delete it.
    const remove = h("button", { type: "button", class: "danger small", "aria-label": `Delete ${rec.originalName}` },
      "Delete");
    remove.addEventListener("click", async () => {
      if (await deleteRecord("motions", rec)) navigate("/motions");
    });
    app.append(h("p", { class: "error-text" }, rec.error ?? "Preprocessing failed."),
      h("aside", { class: "panel" }, h("h2", {}, "Motion record"), h("dl", { class: "facts" },
        [["File", rec.originalName], ["Format", rec.format], ["Size", formatBytes(rec.size)],
          ["Preprocessing", badge(rec.preprocessState)], ["Uploaded", formatTime(rec.createdAt)],
          ["SHA-256", h("code", { class: "hash" }, rec.sha256)]].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "–")])),
      h("p", {}, h("a", { href: rec.contentUrl, download: rec.originalName }, "Download the file"), " ", remove)));
    debug.page.state = rec.preprocessState;
    return null;
  }
  const canvas = h("canvas", { width: "560", height: "560", class: "skeleton", "aria-label": "MediaPipe-33 skeleton" });
  const chart = h("canvas", { width: "900", height: "220", class: "chart", "aria-label": "Joint angles over time" });
  const play = h("button", { type: "button", class: "primary", "aria-label": "Pause" }, "❚❚");
  const seek = h("input", { type: "range", min: "0", max: String(Math.max(0, rec.frames - 1)), value: "0",
    "aria-label": "Frame" });
  const speed = h("select", { "aria-label": "Speed" }, [0.25, 0.5, 1, 2, 4].map((s) =>
    h("option", { value: String(s), selected: s === 1 }, `${s}×`)));
  const loop = h("input", { type: "checkbox", "aria-label": "Loop" });
  const counter = h("span", { class: "counter", "aria-live": "off" }, `0 / ${rec.frames}`);
  const warnings = (rec.warnings ?? []).map((w) => h("p", { class: "warning-text small" }, `${w.code}: ${w.message}`));
  const avatar = new AvatarView(avatarParam(search), debug.page, rememberAvatar);
  app.append(...warnings, h("div", { class: "split" },
    h("div", { class: "viewer-col" }, h("div", { class: "views" }, h("div", { class: "stage skeleton-stage" }, canvas),
      avatar.element),
      h("div", { class: "toolbar player" }, play, seek, counter, speed, h("label", {}, loop, " loop"))),
    h("aside", { class: "panel" }, h("h2", {}, "Motion"), h("dl", { class: "facts" },
      [["Format", rec.format], ["Frames", rec.frames], ["fps", rec.fps], ["Duration", `${rec.durationS?.toFixed?.(2) ?? "–"} s`],
        ["Uploaded", formatTime(rec.createdAt)]].map(([k, v]) => [h("dt", {}, k), h("dd", {}, v ?? "–")])),
    h("p", {}, h("a", { href: rec.keypointsUrl }, "Keypoints NDJSON"), " · ",
      h("a", { href: rec.contentUrl, download: rec.originalName }, "Original file")))),
  h("h2", {}, "Joint angles"), chart, legend());

  let series = [];
  let plot = null;  // the curves, drawn once the keypoints are read
  let lastFrame = null;
  // Frames arrive at the motion's rate (120 fps and more); the page draws
  // the latest one once per display frame, whatever came in between.
  let pending = null;
  let scheduled = false;
  debug.page.drawn = 0;
  const render = () => {
    scheduled = false;
    if (stale() || !pending) return;
    const f = pending;
    pending = null;
    drawSkeleton(canvas, f);
    avatar.pose(f);
    if (!seeking) seek.value = String(f.frame);
    counter.textContent = `${f.frame + 1} / ${rec.frames}`;
    drawCursor(chart, plot, rec.frames, f.frame);
    debug.page.drawn++;
  };
  const ws = new WebSocket(wsUrl(`/api/motions/${id}/stream`));
  ws.binaryType = "arraybuffer";
  const send = (cmd) => ws.readyState === WebSocket.OPEN && ws.send(cmd);
  let seeking = false;
  ws.addEventListener("message", (e) => {
    if (typeof e.data === "string") {
      const m = JSON.parse(e.data);
      if (m.type === "header") {
        debug.page.header = m;
        debug.page.state = "playing";  // playback starts at once (contract §3)
      }
      if (m.type === "status") {
        debug.page.state = m.state;
        play.textContent = m.state === "playing" ? "❚❚" : "▶";
        play.setAttribute("aria-label", m.state === "playing" ? "Pause" : "Play");
      }
      return;
    }
    const f = decodeFrame(e.data);
    lastFrame = f.frame;
    debug.page.frame = f.frame;
    debug.page.received++;
    debug.page.last = f;
    pending = f;
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(render);
    }
  });
  ws.addEventListener("close", (e) => {
    debug.page.state = "closed";
    if (!stale() && e.code !== 1000 && e.code !== 1005) toast(`Stream closed (${e.code}${e.reason ? ": " + e.reason : ""})`, "error");
  });
  play.addEventListener("click", () => send(debug.page.state === "playing" ? "pause" : "play"));
  seek.addEventListener("input", () => (seeking = true));
  seek.addEventListener("change", () => {
    seeking = false;
    send(`seek ${seek.value}`);
  });
  speed.addEventListener("change", () => send(`speed ${speed.value}`));
  loop.addEventListener("change", () => send(`loop ${loop.checked ? "on" : "off"}`));
  chart.addEventListener("click", (e) => {
    const r = chart.getBoundingClientRect();
    const frac = ((e.clientX - r.left) / r.width * chart.width - 28) / (chart.width - 36);
    send(`seek ${Math.round(Math.max(0, Math.min(1, frac)) * (rec.frames - 1))}`);
  });
  fetch(rec.keypointsUrl, { credentials: "same-origin" }).then(async (r) => {
    if (!r.ok) throw new ApiError(r.status, "", r.statusText);
    series = await readAngles(r, rec.frames);
    if (stale()) return;
    plot = h("canvas", { width: String(chart.width), height: String(chart.height) });
    drawAngles(plot, series, rec.frames);
    drawCursor(chart, plot, rec.frames, lastFrame);
    debug.page.anglesLoaded = series.length;
  }).catch((e) => toast(["Joint angles: ", errorView(e)], "error"));
  return { dispose: () => {
    ws.close(1000);
    avatar.dispose();
  } };
}

/** What a viewer shows of the channel's publisher: here, not yet, gone. */
const publisherText = {
  waiting: "No publisher on this channel yet: the frames show as soon as one connects.",
  live: "The publisher is here: waiting for its frames…",
  left: "The publisher left: the last frame it sent stays until a publisher comes back.",
};

export async function livePage({ app, debug, search }, channel) {
  const canvas = h("canvas", { width: "560", height: "560", class: "skeleton", "aria-label": "MediaPipe-33 skeleton" });
  const publisher = h("span", { class: "badge state-unknown" }, "connecting");
  const state = h("p", { class: "muted", role: "status" }, "Connecting…");
  debug.page = { name: "live", channel, frame: null, received: 0, publisher: null };
  const avatar = new AvatarView(avatarParam(search), debug.page, rememberAvatar);
  mount(app, h("p", { class: "crumbs" }, h("a", { href: "/live" }, "Live"), ` / ${channel}`),
    h("h1", {}, "Live: ", h("code", {}, channel), " ", publisher), state,
    h("div", { class: "views" }, h("div", { class: "stage skeleton-stage" }, canvas), avatar.element), legend());
  const setPublisher = (p) => {
    debug.page.publisher = p;
    publisher.className = `badge state-${p}`;
    publisher.textContent = p === "live" ? "live" : p === "left" ? "publisher left" : "waiting";
    mount(state, publisherText[p]);
  };
  const ws = new WebSocket(wsUrl(`/api/live/${encodeURIComponent(channel)}?role=view`));
  ws.binaryType = "arraybuffer";
  ws.addEventListener("message", (e) => {
    if (typeof e.data === "string") {
      const m = JSON.parse(e.data);
      if (m.type === "header") setPublisher(m.publishing === false ? "waiting" : "live");
      if (m.type === "status" && m.state === "live") setPublisher("live");
      if (m.type === "status" && m.state === "publisher-left") setPublisher("left");
      return;
    }
    const f = decodeFrame(e.data);
    debug.page.frame = f.frame;
    debug.page.received++;
    if (debug.page.publisher !== "live") setPublisher("live");
    mount(state, `frame ${f.frame} · ${(f.timeMs / 1000).toFixed(2)} s`);
    drawSkeleton(canvas, f);
    avatar.pose(f);
  });
  ws.addEventListener("close", (e) => {
    debug.page.publisher = "closed";
    mount(state, `Disconnected (${e.code}${e.reason ? ": " + e.reason : ""}).`);
  });
  return { dispose: () => {
    ws.close(1000);
    avatar.dispose();
  } };
}

/** The live channels open now, refreshed every two seconds, and a way to open one. */
export async function liveListPage({ app, debug, navigate }) {
  debug.page = { name: "live-list", channels: null };
  const table = h("div", { class: "table-wrap" }, loading());
  const name = h("input", { type: "text", placeholder: "channel name", pattern: "[A-Za-z0-9_\\-]{1,64}",
    "aria-label": "Channel name", required: true });
  const open = h("form", { class: "toolbar", onsubmit: (e) => {
    e.preventDefault();
    if (name.checkValidity()) navigate(`/live/${name.value}`);
  } }, name, h("button", { type: "submit" }, "View"));
  mount(app, h("h1", {}, "Live"),
    h("p", { class: "muted" }, "Channels relay a publisher's MediaPipe-33 frames to every viewer; ",
      "a viewer may open a channel before its publisher comes. To publish a motion: ",
      h("code", {}, "charkit live publish walk.bvh --channel NAME"), "."), open, table);
  let timer = null;
  let stopped = false;
  const refresh = async () => {
    try {
      const { channels } = await api("/api/live");
      debug.page.channels = channels;
      if (!channels.length) {
        mount(table, h("p", { class: "muted empty" }, "No channel is open now."));
      } else {
        mount(table, h("table", { class: "records" },
          h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Channel"), h("th", { scope: "col" }, "Publisher"),
            h("th", { scope: "col" }, "Viewers"))),
          h("tbody", {}, channels.map((c) => h("tr", { dataset: { channel: c.name } },
            h("td", {}, h("a", { href: `/live/${c.name}` }, c.name)),
            h("td", {}, h("span", { class: `badge state-${c.publishing ? "live" : "waiting"}` },
              c.publishing ? "live" : "waiting")),
            h("td", {}, String(c.viewers)))))));
      }
    } catch (e) {
      mount(table, errorView(e));
    }
    if (!stopped) timer = setTimeout(refresh, 2000);
  };
  await refresh();
  return { dispose: () => {
    stopped = true;
    clearTimeout(timer);
  } };
}
