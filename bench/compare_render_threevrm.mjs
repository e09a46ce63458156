// charkit render against three.js + @pixiv/three-vrm, the renderer VRM
// avatars are usually seen through (docs/render/compare_threevrm.md).
//
//   node bench/compare_render_threevrm.mjs [--charkit BIN] [--size WxH]
//        [--out DIR] [--outlines] [--shadows] [--json] [MODEL.vrm ...]
//
// For each model: three-vrm renders it in Debian's chromium (driven by
// playwright-core, WebGL through SwiftShader) and `charkit render` renders it
// from the same camera, light and image size; both images have transparent
// backgrounds. Reported per model: the silhouette IoU (alpha ≥ 0.5 on each
// side) and the mean and 95th-percentile colour difference CIEDE2000 over the
// pixels both cover. Images go to OUT (default build/compare_threevrm).
// Exit 77 (skipped) without chromium or playwright-core.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { basename, dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { deflateSync, inflateSync } from "node:zlib";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");

// ---- CIEDE2000 (Sharma, Wu and Dalal, "The CIEDE2000 color-difference
// formula: implementation notes, supplementary test data, and mathematical
// observations", 2005), kL = kC = kH = 1 -------------------------------------
const deg = Math.PI / 180;
export function ciede2000([L1, a1, b1], [L2, a2, b2]) {
  const C1 = Math.hypot(a1, b1), C2 = Math.hypot(a2, b2);
  const Cbar = (C1 + C2) / 2;
  const Cbar7 = Cbar ** 7;
  const G = 0.5 * (1 - Math.sqrt(Cbar7 / (Cbar7 + 25 ** 7)));
  const ap1 = (1 + G) * a1, ap2 = (1 + G) * a2;
  const Cp1 = Math.hypot(ap1, b1), Cp2 = Math.hypot(ap2, b2);
  const hue = (b, ap) => (b === 0 && ap === 0 ? 0 : ((Math.atan2(b, ap) / deg) + 360) % 360);
  const hp1 = hue(b1, ap1), hp2 = hue(b2, ap2);
  const dLp = L2 - L1, dCp = Cp2 - Cp1;
  let dhp = 0;
  if (Cp1 * Cp2 !== 0) {
    dhp = hp2 - hp1;
    if (dhp > 180) dhp -= 360;
    else if (dhp < -180) dhp += 360;
  }
  const dHp = 2 * Math.sqrt(Cp1 * Cp2) * Math.sin((dhp / 2) * deg);
  const Lbp = (L1 + L2) / 2, Cbp = (Cp1 + Cp2) / 2;
  let hbp = hp1 + hp2;
  if (Cp1 * Cp2 !== 0) {
    if (Math.abs(hp1 - hp2) <= 180) hbp = (hp1 + hp2) / 2;
    else hbp = hp1 + hp2 < 360 ? (hp1 + hp2 + 360) / 2 : (hp1 + hp2 - 360) / 2;
  }
  const T = 1 - 0.17 * Math.cos((hbp - 30) * deg) + 0.24 * Math.cos(2 * hbp * deg) +
    0.32 * Math.cos((3 * hbp + 6) * deg) - 0.2 * Math.cos((4 * hbp - 63) * deg);
  const dTheta = 30 * Math.exp(-(((hbp - 275) / 25) ** 2));
  const Cbp7 = Cbp ** 7;
  const RC = 2 * Math.sqrt(Cbp7 / (Cbp7 + 25 ** 7));
  const SL = 1 + (0.015 * (Lbp - 50) ** 2) / Math.sqrt(20 + (Lbp - 50) ** 2);
  const SC = 1 + 0.045 * Cbp, SH = 1 + 0.015 * Cbp * T;
  const RT = -Math.sin(2 * dTheta * deg) * RC;
  return Math.sqrt((dLp / SL) ** 2 + (dCp / SC) ** 2 + (dHp / SH) ** 2 + RT * (dCp / SC) * (dHp / SH));
}

// Pairs from Table 1 of the same paper: L a b, L a b, ΔE00.
const SHARMA_PAIRS = [
  [[50, 2.6772, -79.7751], [50, 0, -82.7485], 2.0425],
  [[50, 3.1571, -77.2803], [50, 0, -82.7485], 2.8615],
  [[50, 2.8361, -74.02], [50, 0, -82.7485], 3.4412],
  [[50, -1.3802, -84.2814], [50, 0, -82.7485], 1.0],
  [[50, 0, 0], [50, -1, 2], 2.3669],
  [[50, 2.49, -0.001], [50, -2.49, 0.0009], 7.1792],
  [[50, 2.49, -0.001], [50, -2.49, 0.0011], 7.2195],
  [[50, 2.5, 0], [73, 25, -18], 27.1492],
  [[50, 2.5, 0], [61, -5, 29], 22.8977],
  [[50, 2.5, 0], [56, -27, -3], 31.903],
  [[50, 2.5, 0], [58, 24, 15], 19.4535],
  [[60.2574, -34.0099, 36.2677], [60.4626, -34.1751, 39.4387], 1.2644],
  [[2.0776, 0.0795, -1.135], [0.9033, -0.0636, -0.5514], 0.9082],
];
export function selfCheck() {
  for (const [p, q, want] of SHARMA_PAIRS) {
    for (const got of [ciede2000(p, q), ciede2000(q, p)])
      if (Math.abs(got - want) > 5e-5)
        throw new Error(`CIEDE2000 self-check: ${p} / ${q} gives ${got.toFixed(4)}, the paper ${want}`);
  }
  return SHARMA_PAIRS.length;
}

// sRGB (8-bit, IEC 61966-2-1) → CIELAB, D65 white.
const lin = new Float64Array(256);
for (let i = 0; i < 256; i++) {
  const c = i / 255;
  lin[i] = c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}
const WHITE = [0.95047, 1.0, 1.08883];
const f = (t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
export function srgbToLab(r, g, b) {
  const R = lin[r], G = lin[g], B = lin[b];
  const X = 0.4124564 * R + 0.3575761 * G + 0.1804375 * B;
  const Y = 0.2126729 * R + 0.7151522 * G + 0.072175 * B;
  const Z = 0.0193339 * R + 0.119192 * G + 0.9503041 * B;
  const fx = f(X / WHITE[0]), fy = f(Y / WHITE[1]), fz = f(Z / WHITE[2]);
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

// ---- PNG (8-bit grey, grey+alpha, RGB, RGBA; not interlaced) -------------
export function decodePng(buf) {
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error("not a PNG");
  let pos = 8, width = 0, height = 0, depth = 0, type = 0, interlace = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), kind = buf.toString("latin1", pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (kind === "IHDR") {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      depth = data[8]; type = data[9]; interlace = data[12];
    } else if (kind === "IDAT") idat.push(data);
    else if (kind === "IEND") break;
    pos += 12 + len;
  }
  const channels = { 0: 1, 2: 3, 4: 2, 6: 4 }[type];
  if (depth !== 8 || !channels || interlace) throw new Error(`unsupported PNG (depth ${depth}, type ${type})`);
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      let v = line[x];
      if (filter === 1) v += a;
      else if (filter === 2) v += b;
      else if (filter === 3) v += (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      px[y * stride + x] = v & 255;
    }
  }
  const rgba = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const s = px.subarray(i * channels, (i + 1) * channels);
    const [r, g, b, a] = channels === 1 ? [s[0], s[0], s[0], 255] : channels === 2 ? [s[0], s[0], s[0], s[1]]
      : channels === 3 ? [s[0], s[1], s[2], 255] : [s[0], s[1], s[2], s[3]];
    rgba[4 * i] = r; rgba[4 * i + 1] = g; rgba[4 * i + 2] = b; rgba[4 * i + 3] = a;
  }
  return { width, height, rgba };
}

const crcTable = new Int32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32(b) {
  let c = -1;
  for (const x of b) c = crcTable[(c ^ x) & 255] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}
export function encodePng(width, height, rgba) {
  const chunk = (kind, data) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(kind, 4, "latin1");
    data.copy(out, 8);
    out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; ihdr[9] = 6;
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

// ---- comparison -----------------------------------------------------------
/** IoU of the silhouettes and ΔE00 over the pixels both cover; a heat map. */
export function compare(a, b, width, height) {
  let both = 0, either = 0, sum = 0;
  const des = [];
  const heat = Buffer.alloc(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    const ina = a[4 * i + 3] >= 128, inb = b[4 * i + 3] >= 128;
    if (ina || inb) either++;
    if (ina !== inb) { heat[4 * i] = 255; heat[4 * i + 2] = 255; heat[4 * i + 3] = 255; }
    if (!(ina && inb)) continue;
    both++;
    const d = ciede2000(srgbToLab(a[4 * i], a[4 * i + 1], a[4 * i + 2]), srgbToLab(b[4 * i], b[4 * i + 1], b[4 * i + 2]));
    sum += d;
    des.push(d);
    const v = Math.min(255, Math.round(d * 255 / 20));  // ΔE00 20 and over: white
    heat[4 * i] = v; heat[4 * i + 1] = v; heat[4 * i + 2] = v; heat[4 * i + 3] = 255;
  }
  des.sort((x, y) => x - y);
  return {
    iou: either ? both / either : 1,
    meanDe: both ? sum / both : 0,
    p95De: both ? des[Math.min(des.length - 1, Math.floor(0.95 * des.length))] : 0,
    both,
    heat,
  };
}

// ---- the run --------------------------------------------------------------
function parseArgs(argv) {
  const o = { charkit: join(root, "build/release/apps/charkit/charkit"), size: "512x512",
    out: join(root, "build/compare_threevrm"), outlines: false, shadows: false, json: false, models: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--charkit") o.charkit = resolve(argv[++i]);
    else if (a === "--size") o.size = argv[++i];
    else if (a === "--out") o.out = resolve(argv[++i]);
    else if (a === "--outlines") o.outlines = true;
    else if (a === "--shadows") o.shadows = true;
    else if (a === "--json") o.json = true;
    else if (a === "--self-check") o.selfCheckOnly = true;
    else o.models.push(resolve(a));
  }
  if (!o.models.length) {
    const dir = join(root, "tests/data/models");
    for (const name of ["Godette_vrm_v4.vrm", "debug_robot.vrm", "sphere.vrm"]) {
      const p = join(dir, name);
      if (existsSync(p)) o.models.push(p);
    }
  }
  return o;
}

const sub = (a, b) => a.map((x, i) => x - b[i]);
const addv = (a, b) => a.map((x, i) => x + b[i]);
const scl = (a, s) => a.map((x) => x * s);
const len = (a) => Math.hypot(...a);

/** charkit's default framing (render::framing_camera), made explicit. */
function framing(info, width, height, fov) {
  const centre = scl(addv(info.min, info.max), 0.5);
  const radius = Math.max(len(sub(info.max, centre)), 1e-4);
  const half = (fov * deg) / 2;
  const fit = Math.min(Math.tan(half), Math.tan(half) * (width / height));
  const distance = (radius / Math.sin(Math.atan(fit))) * 1.02;
  const facing = info.metaVersion === "0" ? -1 : 1;  // VRM 0.x faces −Z
  return { eye: addv(centre, [0, 0, facing * distance]), target: centre, up: [0, 1, 0], fov,
    near: distance * 0.01, far: distance * 100, facing, centre, radius };
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const checked = selfCheck();
  if (o.selfCheckOnly) { console.log(`CIEDE2000 self-check: ${checked} pairs of Sharma et al. (2005) agree`); return; }
  const chromiumPath = "/usr/bin/chromium";
  if (!existsSync(chromiumPath)) { console.log("chromium is not installed: skipped"); process.exit(77); }
  const require = createRequire(join(root, "web/package.json"));
  let chromium;
  try { ({ chromium } = require("playwright-core")); } catch {
    console.log("web/node_modules/playwright-core missing (run scripts/bootstrap): skipped");
    process.exit(77);
  }
  if (!existsSync(o.charkit)) throw new Error(`no charkit at ${o.charkit} (--charkit BIN)`);
  const [width, height] = o.size.split("x").map(Number);
  mkdirSync(o.out, { recursive: true });

  // Loopback server: the page, web/node_modules as /nm/, the models as /m/N.
  const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript" };
  const server = createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, "http://x").pathname);
    let file = null;
    if (url === "/page.html") file = join(here, "compare_render_threevrm.html");
    else if (url.startsWith("/nm/")) file = join(root, "web/node_modules", url.slice(4));
    else if (url.startsWith("/m/")) file = o.models[Number(url.slice(3))];
    if (!file || file.includes("..") || !existsSync(file) || !statSync(file).isFile()) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({ executablePath: chromiumPath,
    args: ["--no-sandbox", "--enable-unsafe-swiftshader", "--use-angle=swiftshader"] });
  const rows = [];
  try {
    for (let m = 0; m < o.models.length; m++) {
      const model = o.models[m], name = basename(model, extname(model));
      const page = await browser.newPage();
      const log = [];
      page.on("console", (msg) => log.push(msg.text()));
      page.on("pageerror", (e) => log.push(String(e)));
      await page.goto(`${base}/page.html`);
      await page.waitForFunction(() => window.benchReady === true, null, { timeout: 30000 });
      const info = await page.evaluate((u) => window.bench.load(u), `/m/${m}`);
      const cam = framing(info, width, height, 30);
      // charkit's default light: in front, above and to the side.
      const light = [0.4, 0.7, 0.6 * cam.facing];
      const view = { ...cam, width, height, exposure: 1, lightDirection: light, lightColour: [1, 1, 1],
        ambient: [0.25, 0.25, 0.28], outlines: o.outlines, shadows: o.shadows };
      const t0 = Date.now();
      const b64 = await page.evaluate((v) => window.bench.render(v), view);
      const threeMs = Date.now() - t0;
      await page.close();
      const three = Buffer.from(b64, "base64");
      const tag = `${name}${o.outlines ? "_outlines" : ""}${o.shadows ? "_shadows" : ""}`;
      writeFileSync(join(o.out, `${tag}_threevrm.png`), encodePng(width, height, three));
      const ckPng = join(o.out, `${tag}_charkit.png`);
      // charkit's far plane is at infinity (three.js: cam.far, well past the model).
      const camera = `eye=${cam.eye.join(",")};target=${cam.target.join(",")};up=${cam.up.join(",")};fov=${cam.fov};near=${cam.near}`;
      const args = ["render", model, "-o", ckPng, "--size", `${width}x${height}`, "--camera", camera,
        "--light", light.join(","), "--light-colour", view.lightColour.join(","), "--ambient", view.ambient.join(","),
        "--exposure", "1"];
      if (!o.shadows) args.push("--no-shadows");
      // Both draw MToon outlines by default; --outlines keeps them on both sides.
      if (!o.outlines) args.push("--no-outlines");
      const t1 = Date.now();
      let ckJson;
      try {
        ckJson = JSON.parse(execFileSync(o.charkit, [...args, "--json"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }));
      } catch (e) {
        throw new Error(`charkit ${args.join(" ")} failed:\n${e.stderr ?? e}`);
      }
      const charkitMs = Date.now() - t1;
      const ck = decodePng(readFileSync(ckPng));
      const c = compare(three, ck.rgba, width, height);
      writeFileSync(join(o.out, `${tag}_diff.png`), encodePng(width, height, c.heat));
      rows.push({ model: name, outlines: o.outlines, iou: c.iou, meanDe: c.meanDe, p95De: c.p95De, pixels: c.both,
        threeMaterials: info.materials, threeOutlineMaterials: info.outlines, threeRevision: info.three,
        charkitShading: [...new Set(ckJson.parts.map((p) => `${p.part}: ${p.shading}`))],
        camera, light, device: ckJson.device, threeMs, charkitMs, log: log.filter((l) => !/GPU stall|WebGL/.test(l)).slice(0, 5) });
    }
  } finally {
    await browser.close();
    server.close();
  }
  if (o.json) { console.log(JSON.stringify({ width, height, shadows: o.shadows, rows }, null, 1)); return; }
  console.log(`CIEDE2000 self-check: ${checked} pairs of Sharma et al. (2005) agree`);
  console.log(`${width}x${height}, outlines ${o.outlines ? "on" : "off"}, shadows ${o.shadows ? "on" : "off"}; three.js r${rows[0]?.threeRevision}, charkit on ${rows[0]?.device}; images in ${o.out}`);
  console.log("| model | IoU | mean ΔE00 | p95 ΔE00 | pixels compared |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const r of rows)
    console.log(`| ${r.model}${r.outlines ? " (outlines)" : ""} | ${r.iou.toFixed(4)} | ${r.meanDe.toFixed(2)} | ${r.p95De.toFixed(2)} | ${r.pixels} |`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  main().catch((e) => { console.error(e.stack ?? String(e)); process.exit(1); });
