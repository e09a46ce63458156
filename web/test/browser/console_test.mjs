// The web console in a real browser: Debian's chromium driven by
// playwright-core, WebGL through SwiftShader, against a real `charkit serve`
// on loopback with a temporary data folder.
//   node web/test/browser/console_test.mjs CHARKIT CONSOLE_DIR DATA_DIR OUT_DIR
// Screenshots of every page go to OUT_DIR. Exit 77 (skipped) without
// chromium or playwright-core.
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [charkit, consoleDir, dataDir, outDir] = process.argv.slice(2).map((p) => resolve(p));
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const chromiumPath = "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  console.log("chromium is not installed (scripts/bootstrap installs it): skipped");
  process.exit(77);
}
const require = createRequire(join(root, "web/package.json"));
let chromium;
try {
  ({ chromium } = require("playwright-core"));
} catch {
  console.log("web/node_modules/playwright-core missing (run scripts/bootstrap): skipped");
  process.exit(77);
}
if (!existsSync(join(consoleDir, "index.html"))) {
  console.error(`no built console in ${consoleDir}`);
  process.exit(1);
}

const models = join(root, "tests/data/models");
const files = {
  vrm0: join(models, "sphere.vrm"),
  vrm1: join(models, "debug_robot.vrm"),
  godette: join(models, "Godette_vrm_v4.vrm"),
  glb: join(models, "CesiumMan.glb"),
  bvh: join(root, "tests/data/bvh/test_mocapbank.bvh"),
  walk: join(root, "tests/data/bvh/test_freebvh.bvh"),
  bem: join(root, "tests/data/examples/example-1.5.bem"),
  drivers: join(root, "tests/data/examples/example-1.5-drivers.bem"),
};
rmSync(dataDir, { recursive: true, force: true });
mkdirSync(dataDir, { recursive: true });
mkdirSync(outDir, { recursive: true });
// An invalid package: the valid one with its manifest cut short.
const valid = readFileSync(files.bem);
files.badBem = join(dataDir, "broken.bem");
writeFileSync(files.badBem, valid.subarray(0, Math.floor(valid.length / 2)));

/** A GLB's JSON chunk, read here to check the page against the file itself. */
function glbJson(path) {
  const bytes = readFileSync(path);
  return JSON.parse(bytes.subarray(20, 20 + bytes.readUInt32LE(12)).toString("utf8"));
}

// ---- the server --------------------------------------------------------
const servers = [];
/** Starts `charkit serve` on a free loopback port; resolves to the port. */
function startServer(data) {
  const srv = spawn(charkit, ["serve", "--listen", "127.0.0.1:0", "--data", data, "--web", consoleDir,
    "--workers", "2"], { stdio: ["ignore", "ignore", "pipe"] });
  servers.push(srv);
  let log = "";
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`the server did not start:\n${log}`)), 20000);
    srv.stderr.on("data", (d) => {
      log += d;
      const m = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)\//);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    });
    srv.on("exit", (code) => fail(new Error(`the server exited (${code}):\n${log}`)));
  });
}
const port = await startServer(join(dataDir, "data"));
const base = `http://127.0.0.1:${port}`;
const getJson = async (path) => (await fetch(base + path)).json();

let browser;
let failed = false;
const step = async (name, fn) => {
  const t0 = Date.now();
  try {
    await fn();
    console.log(`ok   ${name} (${Date.now() - t0} ms)`);
  } catch (e) {
    failed = true;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
};

try {
  browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
  });
  const shot = (name) => page.screenshot({ path: join(outDir, `${name}.png`) });
  const ready = () => page.waitForFunction(() => window.charkitConsole?.ready === true);

  await step("routes answer the app and the bundle", async () => {
    for (const path of ["/", "/models", "/models/1", "/motions", "/motions/9", "/packages", "/packages/2", "/live", "/live/cam-1"]) {
      const r = await fetch(base + path);
      assert.equal(r.status, 200, path);
      assert.match(await r.text(), /assets\/console\.js/, path);
    }
    const js = await fetch(`${base}/assets/console.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get("content-type"), /javascript/);
    const again = await fetch(`${base}/assets/console.js`, { headers: { "If-None-Match": js.headers.get("etag") } });
    assert.equal(again.status, 304);
    assert.equal((await fetch(`${base}/assets/nothing.js`)).status, 404);
    assert.equal((await fetch(`${base}/models/1/extra`)).status, 404);
  });

  await step("the page's icon is served, and nothing the page asks for is missing", async () => {
    const missing = [];
    const watch = (r) => {
      if (r.status() >= 400) missing.push(`${r.status()} ${r.url()}`);
    };
    page.on("response", watch);
    await page.goto(base + "/");
    await ready();
    const href = await page.$eval("link[rel=icon]", (l) => l.href);
    const icon = await fetch(href);
    assert.equal(icon.status, 200);
    assert.equal(icon.headers.get("content-type"), "image/svg+xml");
    assert.match(await icon.text(), /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    // Chromium fetches the icon the page names; it must load as an image.
    const size = await page.evaluate(async (url) => {
      const img = new Image();
      img.src = url;
      await img.decode();
      return [img.naturalWidth, img.naturalHeight];
    }, href);
    assert.ok(size[0] > 0 && size[1] > 0, `icon size ${size}`);
    page.off("response", watch);
    assert.deepEqual(missing, []);
  });

  const ids = {};
  await step("a refused upload reads as a sentence, its code small, beside the file name", async () => {
    await page.goto(base + "/motions");
    await ready();
    const before = consoleErrors.length;
    await page.setInputFiles("#upload-input", [{ name: "empty.bvh", mimeType: "application/octet-stream", buffer: Buffer.alloc(0) }]);
    await page.waitForSelector(".upload.failed");
    // Chromium logs the refused request (400) itself; that line is this step's doing.
    const added = consoleErrors.splice(before);
    assert.ok(added.every((e) => /status of 400/.test(e)), added.join("\n"));
    const row = await page.$eval(".upload.failed", (r) => {
      const status = r.querySelector(".upload-status");
      return { text: status.textContent, code: status.querySelector(".error-code")?.textContent,
        statusWidth: status.getBoundingClientRect().width, rowWidth: r.getBoundingClientRect().width };
    });
    assert.equal(row.code, "EMPTY_BODY");
    assert.ok(row.text.startsWith("The file is empty."), row.text);
    assert.ok(row.statusWidth > 0.5 * row.rowWidth, `the message is squeezed into ${row.statusWidth} of ${row.rowWidth} px`);
  });

  await step("drag-and-drop upload of six files reaches final states without a reload", async () => {
    await page.goto(base + "/");
    await ready();
    const marker = await page.evaluate(() => (window.__noReload = Math.random()));
    // What a drop does: the files land in the zone's file input.
    await page.setInputFiles("#upload-input", [files.vrm0, files.vrm1, files.glb, files.bvh, files.bem, files.badBem]);
    await page.waitForFunction(() => document.querySelectorAll(".upload.ok").length === 6, null, { timeout: 30000 });
    const links = await page.$$eval(".upload.ok a", (as) => as.map((a) => [a.closest(".upload").querySelector(".upload-name").textContent, a.getAttribute("href")]));
    for (const [name, href] of links) ids[name] = href;
    assert.match(ids["sphere.vrm"], /^\/models\/\d+$/);
    assert.match(ids["CesiumMan.glb"], /^\/models\/\d+$/);
    assert.match(ids["test_mocapbank.bvh"], /^\/motions\/\d+$/);
    assert.match(ids["example-1.5.bem"], /^\/packages\/\d+$/);
    assert.match(ids["broken.bem"], /^\/packages\/\d+$/);
    // The dashboard shows the final states by itself (polling), same page.
    await page.waitForFunction(() => {
      const t = document.querySelector(".tiles")?.textContent ?? "";
      return ["sphere.vrm", "debug_robot.vrm", "CesiumMan.glb", "test_mocapbank.bvh", "example-1.5.bem", "broken.bem"]
        .every((n) => t.includes(n)) && !/pending|running|unknown/.test(t);
    }, null, { timeout: 60000 });
    const text = await page.textContent(".tiles");
    assert.match(text, /valid/);
    assert.match(text, /invalid/);
    assert.equal(await page.evaluate(() => window.__noReload), marker, "the page was reloaded");
    // A file charkit takes no kind of is refused in the page, readably.
    await page.setInputFiles("#upload-input", [{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello") }]);
    await page.waitForFunction(() => document.querySelector(".upload.failed .upload-status")?.textContent.includes(".txt"));
    await shot("dashboard");
  });

  await step("lists: search, filter, sort, back/forward", async () => {
    await page.click('nav a[href="/models"]');
    await page.waitForFunction(() => window.charkitConsole.page?.name === "list" && window.charkitConsole.page.rows.length === 3);
    await page.fill('input[type="search"]', "vrm");
    await page.waitForFunction(() => window.charkitConsole.page.rows.length === 2);
    assert.match(page.url(), /q=vrm/);
    await page.fill('input[type="search"]', "");
    await page.selectOption('select[aria-label="Filter by state"]', "done");
    await page.waitForFunction(() => window.charkitConsole.page.rows.every((r) => r.state === "done") && window.charkitConsole.page.rows.length >= 1);
    await shot("models");
    await page.click('nav a[href="/packages"]');
    await page.waitForFunction(() => window.charkitConsole.page?.kind === "packages");
    await page.goBack();
    await page.waitForFunction(() => window.charkitConsole.page?.kind === "models");
    await page.goForward();
    await page.waitForFunction(() => window.charkitConsole.page?.kind === "packages" && window.charkitConsole.page.rows.length === 2);
    await shot("packages");
  });

  // The stage's pixels (the WebGL canvas scaled to 96×96) for comparisons.
  const stagePixels = () => page.evaluate(() => {
    const gl = document.querySelector(".stage canvas");
    const c = document.createElement("canvas");
    c.width = 96;
    c.height = 96;
    const ctx = c.getContext("2d");
    ctx.drawImage(gl, 0, 0, 96, 96);
    return Array.from(ctx.getImageData(0, 0, 96, 96).data);
  });
  const changedFraction = (a, b) => {
    let changed = 0;
    for (let i = 0; i < a.length; i += 4) {
      const d = Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]);
      if (d > 24) changed++;
    }
    return changed / (a.length / 4);
  };
  /** The licence panel holds exactly the file's meta values (VRM 1.0 or 0.x meta), in words. */
  const checkLicence = async (json) => {
    const v1 = json.extensions?.VRMC_vrm?.meta;
    const meta = v1 ?? json.extensions.VRM.meta;
    const fields = v1 ? ["avatarPermission", "allowExcessivelyViolentUsage", "allowExcessivelySexualUsage", "commercialUsage",
      "allowPoliticalOrReligiousUsage", "allowAntisocialOrHateUsage", "creditNotation", "allowRedistribution", "modification",
      "licenseUrl", "otherLicenseUrl"]
      : ["allowedUserName", "violentUssageName", "sexualUssageName", "commercialUssageName", "licenseName",
        "otherPermissionUrl", "otherLicenseUrl"];
    const { shown, panel, about } = await page.$eval(".licence", (dl) => ({ about: dl.textContent,
      panel: dl.closest("[role=tabpanel]").textContent,
      shown: [...dl.querySelectorAll("dd[data-field]")].map((d) => ({ field: d.dataset.field, value: d.dataset.value ?? null,
        text: d.textContent })) }));
    assert.deepEqual(shown.map((r) => r.field), fields);
    for (const { field, value, text } of shown) {
      assert.equal(value, meta[field] === undefined ? null : String(meta[field]), field);
      if (meta[field] === true || meta[field] === "Allow") assert.match(text, /^allowed/, field);
      if (meta[field] === false || meta[field] === "Disallow") assert.match(text, /^not allowed/, field);
      if (meta[field] === "Everyone" || meta[field] === "everyone") assert.match(text, /^everyone/, field);
      assert.ok(typeof meta[field] === "boolean" || !/^(Allow|Disallow|Everyone|CC_|corporation|unnecessary)/.test(text),
        `${field} shows the raw value “${text}”`);
    }
    for (const who of v1 ? meta.authors : [meta.author]) assert.ok(panel.includes(who), `author ${who}`);
    if (meta.version) assert.ok(panel.includes(meta.version), "version");
    if (meta.contactInformation) assert.ok(panel.includes(meta.contactInformation), "contact");
    return about;
  };
  /** The expressions a VRM file declares: VRM 1.0 presets and custom ones, or VRM 0.x blend shape groups. */
  const expressionCount = (json) => {
    const v1 = json.extensions?.VRMC_vrm?.expressions;
    if (v1) return Object.keys(v1.preset ?? {}).length + Object.keys(v1.custom ?? {}).length;
    return json.extensions.VRM.blendShapeMaster?.blendShapeGroups?.length ?? 0;
  };
  for (const [name, file, version] of [["VRM 0.x", "sphere.vrm", "0.x"], ["VRM 1.0", "debug_robot.vrm", "1.0"], ["GLB", "CesiumMan.glb", null]]) {
    await step(`model page renders the ${name}`, async () => {
      // Hold the model's bytes until the empty scene has been captured.
      let release;
      const gate = new Promise((r) => (release = r));
      await page.route("**/api/assets/*", async (route) => {
        await gate;
        await route.continue();
      });
      await page.goto(base + ids[file]);
      await page.waitForFunction(() => window.charkitConsole.page?.viewer?.frames > 3);
      const empty = await stagePixels();
      release();
      await page.waitForFunction(() => window.charkitConsole.page.loaded || window.charkitConsole.page.error, null, { timeout: 30000 });
      await page.unroute("**/api/assets/*");
      const state = await page.evaluate(() => ({ error: window.charkitConsole.page.error, stats: window.charkitConsole.page.stats }));
      assert.equal(state.error, null);
      assert.ok(state.stats.triangles > 0, "no triangles");
      if (version) assert.equal(state.stats.vrm?.version, version);
      else assert.equal(state.stats.vrm, null);
      // Skins and joints as the file declares them (its JSON chunk read here).
      const json = glbJson(Object.values(files).find((p) => p.endsWith(`/${file}`)));
      assert.equal(state.stats.skins, json.skins?.length ?? 0);
      assert.equal(state.stats.joints, new Set((json.skins ?? []).flatMap((s) => s.joints)).size);
      // The node tree lists every node of the file, each once; VRMs show their licence as the file states it.
      assert.deepEqual(await page.$$eval("button[data-node]", (bs) => bs.map((b) => Number(b.dataset.node)).sort((a, b) => a - b)),
        json.nodes.map((_, i) => i));
      if (version) {
        await checkLicence(json);
        assert.equal(await page.$$eval("input[data-expression]", (e) => e.length), expressionCount(json));
      }
      const f0 = await page.evaluate(() => window.charkitConsole.page.viewer.frames);
      await page.waitForFunction((f) => window.charkitConsole.page.viewer.frames > f + 3, f0);
      const drawn = await stagePixels();
      const fraction = changedFraction(empty, drawn);
      assert.ok(fraction > 0.01, `only ${(fraction * 100).toFixed(2)} % of the stage changed`);
      await page.check("#toggle-skeleton");
      await page.check("#toggle-wireframe");
      await shot(`model-${file.replace(/\W+/g, "-")}`);
      console.log(`     ${file}: ${(fraction * 100).toFixed(1)} % of the stage drawn, ${state.stats.triangles} triangles`);
    });
  }

  await step("model page inspects a VRM 0.x: expression sliders, node selection, licence", async () => {
    const json = glbJson(files.godette);
    const up = await fetch(`${base}/api/models?filename=Godette_vrm_v4.vrm`, { method: "POST", body: readFileSync(files.godette) });
    assert.ok(up.status === 201 || up.status === 200, `upload: ${up.status}`);
    const id = (await up.json()).id;
    try {
      for (let i = 0; i < 400 && /pending|running/.test((await getJson(`/api/models/${id}`)).intakeState); i++)
        await new Promise((ok) => setTimeout(ok, 50));
      await page.goto(`${base}/models/${id}`);
      await page.waitForFunction(() => window.charkitConsole.page?.loaded || window.charkitConsole.page?.error, null, { timeout: 30000 });
      // Each call into this page waits for a frame of its WebGL (about 0.3 s under SwiftShader), so the
      // page's own click()s go in batches; one selection and the slider go through the mouse and keys.
      // clicks([sel, …]) clicks each in turn and says what each left; a null only reads.
      const clicks = (selectors) => page.evaluate((list) => list.map((sel) => {
        sel && document.querySelector(sel).click();
        const p = window.charkitConsole.page;
        return { selected: p.selected, highlighted: p.highlighted, pressed: sel && document.querySelector(sel).getAttribute("aria-pressed") };
      }), selectors);
      const morphs = () => page.evaluate(() => window.charkitConsole.page.morphs);
      const face = json.nodes.findIndex((n) => n.mesh !== undefined && n.name === "Face");
      const head = json.extensions.VRM.humanoid.humanBones.find((b) => b.bone === "head").node;
      assert.ok(face >= 0 && head >= 0);
      const tree = await page.evaluate(() => ({ error: window.charkitConsole.page.error,
        nodes: [...document.querySelectorAll("button[data-node]")].map((b) => [Number(b.dataset.node), b.textContent]),
        facts: Object.fromEntries([...document.querySelectorAll(".facts dt")].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])) }));
      assert.equal(tree.error, null);
      // Its one skin's joints counted (68), beside "Skinned: yes".
      assert.deepEqual([tree.facts.Skinned, tree.facts.Skins, tree.facts.Joints],
        ["yes", String(json.skins.length), String(new Set(json.skins.flatMap((k) => k.joints)).size)]);

      // The node tree: every node of the file, by its name; selecting one outlines it, again clears it.
      assert.deepEqual(tree.nodes.map(([i]) => i).sort((x, y) => x - y), json.nodes.map((_, i) => i));
      for (const [i, text] of tree.nodes) assert.ok(text.startsWith(json.nodes[i].name ?? `node ${i}`), `node ${i}: ${text}`);
      await clicks(['[data-tab="nodes"]']);
      const plain = await stagePixels();
      await page.click(`button[data-node="${face}"]`);
      const f0 = await page.evaluate(() => window.charkitConsole.page.viewer.frames);
      await page.waitForFunction((f) => window.charkitConsole.page.viewer.frames > f + 2, f0);
      const outlined = changedFraction(plain, await stagePixels());
      const [selected, again, bone, none, last] = await clicks([null, `button[data-node="${face}"]`,
        `button[data-node="${head}"]`, "button.node-none", `button[data-node="${face}"]`]);
      assert.deepEqual(selected.selected, { index: face, name: "Face" });
      assert.equal(selected.highlighted?.name, "Face");
      assert.ok(selected.highlighted.size > 0);
      assert.ok(outlined > 0.001, `the outline changed ${(outlined * 100).toFixed(2)} % of the stage`);
      assert.deepEqual([again.selected, again.highlighted, again.pressed], [null, null, "false"], "selecting again clears");
      // A bone (no geometry under it) is outlined too; "None" clears.
      assert.equal(bone.highlighted?.name, json.nodes[head].name);
      assert.ok(tree.nodes.find(([i]) => i === head)[1].includes("humanoid head"));
      assert.deepEqual([none.selected, none.highlighted], [null, null], "None clears");
      assert.deepEqual([last.highlighted?.name, last.pressed], ["Face", "true"]);

      // Expressions: one slider per blend shape group; Blink drives its binds' morph targets, nothing else.
      await clicks(['[data-tab="expressions"]']);
      const groups = json.extensions.VRM.blendShapeMaster.blendShapeGroups;
      assert.equal(await page.$$eval("input[data-expression]", (e) => e.length), groups.length);
      const binds = groups.find((g) => g.presetName === "blink").binds;
      assert.ok(binds.length > 0);
      const zero = await morphs();
      assert.ok(binds.every((b) => zero[b.mesh][b.index] === 0), JSON.stringify(zero));
      await page.focus('input[data-expression="blink"]');
      await page.keyboard.press("End");
      await page.waitForFunction((bs) => {
        const m = window.charkitConsole.page.morphs;
        return bs.every((b) => Math.abs(m[b.mesh][b.index] - b.weight / 100) < 1e-6);
      }, binds);
      for (const [mesh, ws] of Object.entries(await morphs()))
        ws.forEach((w, i) => {
          if (!binds.some((b) => b.mesh === Number(mesh) && b.index === i)) assert.equal(w, 0, `mesh ${mesh} target ${i}`);
        });
      await shot("model-Godette-inspect");
      await clicks([".expressions-reset"]);
      await page.waitForFunction((bs) => bs.every((b) => window.charkitConsole.page.morphs[b.mesh][b.index] === 0), binds);

      // The licence as the file's VRM 0.x meta states it.
      const text = await checkLicence(json);
      assert.match(text, /CC BY: credit required/);
      // Every tab fits a 420 px window.
      await page.setViewportSize({ width: 420, height: 800 });
      const wide = await page.evaluate(() => ["facts", "expressions", "nodes", "licence"].map((tab) => {
        document.querySelector(`[data-tab="${tab}"]`).click();
        return [tab, document.documentElement.scrollWidth - window.innerWidth];
      }).filter(([, over]) => over > 1));
      assert.deepEqual(wide, [], "tabs wider than 420 px");
      console.log(`     Godette: ${tree.nodes.length} nodes, ${groups.length} expressions; the outline of Face changed ` +
        `${(outlined * 100).toFixed(2)} % of the stage; blink set ${binds.length} morph targets`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
      await fetch(`${base}/api/models/${id}`, { method: "DELETE" });
    }
  });

  await step("motion page plays, pauses and seeks the keypoint stream", async () => {
    const rec = await getJson(`/api${ids["test_mocapbank.bvh"]}`);
    assert.equal(rec.preprocessState, "done");
    await page.goto(base + ids["test_mocapbank.bvh"]);
    await page.waitForFunction(() => window.charkitConsole.page?.received > 5, null, { timeout: 20000 });
    assert.equal(await page.evaluate(() => window.charkitConsole.page.header.frames), rec.frames);
    await page.click('button[aria-label="Pause"]');
    await page.waitForFunction(() => window.charkitConsole.page.state === "paused");
    const paused = await page.evaluate(() => window.charkitConsole.page.frame);
    await page.waitForTimeout(600);
    assert.equal(await page.evaluate(() => window.charkitConsole.page.frame), paused, "the frame counter moved while paused");
    const target = Math.floor(rec.frames / 2);
    await page.$eval('input[aria-label="Frame"]', (el, v) => {
      el.value = String(v);
      el.dispatchEvent(new Event("change"));
    }, target);
    await page.waitForFunction((t) => window.charkitConsole.page.frame === t, target);
    // The frame shown is the NDJSON's frame `target`.
    const nd = await (await fetch(base + rec.keypointsUrl)).text();
    const line = JSON.parse(nd.split("\n")[target]);
    const shown = await page.evaluate(() => window.charkitConsole.page.last);
    assert.equal(shown.frame, target);
    for (let i = 0; i < 33; i++)
      for (let k = 0; k < 4; k++) assert.ok(Math.abs(shown.points[i][k] - line.points[i][k]) < 1e-6);
    await page.waitForFunction(() => window.charkitConsole.page.anglesLoaded > 0);
    await shot("motion");
  });

  // A second motion, a walk cycle (the first is a crouch), stored through the API.
  await step("a walk cycle uploaded through the API converts", async () => {
    const r = await fetch(`${base}/api/motions?filename=test_freebvh.bvh`, { method: "POST", body: readFileSync(files.walk) });
    assert.ok(r.status === 201 || r.status === 200, `upload: ${r.status}`);
    const id = (await r.json()).id;
    ids["test_freebvh.bvh"] = `/motions/${id}`;
    for (let i = 0; i < 600 && (await getJson(`/api/motions/${id}`)).preprocessState !== "done"; i++)
      await new Promise((ok) => setTimeout(ok, 100));
    assert.equal((await getJson(`/api/motions/${id}`)).preprocessState, "done");
  });

  for (const [name, file, motion, frames] of [["VRM 1.0", "debug_robot.vrm", "test_mocapbank.bvh", [0, 60, 150, 230, 301, 420]],
    ["VRM 0.x", "sphere.vrm", "test_mocapbank.bvh", [0, 60, 150, 230, 301, 420]],
    ["VRM 1.0", "debug_robot.vrm", "test_freebvh.bvh", [0, 11, 23, 34, 46, 57, 68]]]) {
    await step(`motion page drives a ${name} avatar with ${motion}: upper-arm directions follow the keypoints`, async () => {
      const rec = await getJson(`/api${ids[motion]}`);
      const avatarId = Number(ids[file].split("/").pop());
      await page.goto(`${base}${ids[motion]}?avatar=${avatarId}`);
      await page.waitForFunction((id) => window.charkitConsole.page?.avatar?.id === id &&
        window.charkitConsole.page.avatar.loaded && window.charkitConsole.page.avatar.dirs, avatarId, { timeout: 30000 });
      await page.click('button[aria-label="Pause"]');
      await page.waitForFunction(() => window.charkitConsole.page.state === "paused");
      const lines = (await (await fetch(base + rec.keypointsUrl)).text()).trim().split("\n").map((l) => JSON.parse(l));
      const world = (p) => [p[0] - 0.5, 0.5 - p[1], -p[2]];
      const direction = (a, b) => {
        const d = world(b).map((v, i) => v - world(a)[i]);
        const n = Math.hypot(...d);
        return d.map((v) => v / n);
      };
      const angle = (u, v) => (Math.acos(Math.max(-1, Math.min(1, u[0] * v[0] + u[1] * v[1] + u[2] * v[2]))) * 180) / Math.PI;
      let worst = 0;
      assert.ok(lines.length > frames[frames.length - 1], `${motion} has ${lines.length} frames`);
      for (const target of frames) {
        await page.$eval('input[aria-label="Frame"]', (el, v) => {
          el.value = String(v);
          el.dispatchEvent(new Event("change"));
        }, target);
        await page.waitForFunction((t) => window.charkitConsole.page.avatar?.frame === t, target);
        const dirs = await page.evaluate(() => window.charkitConsole.page.avatar.dirs);
        const pts = lines[target].points;
        worst = Math.max(worst, angle(dirs.leftUpperArm, direction(pts[11], pts[13])),
          angle(dirs.rightUpperArm, direction(pts[12], pts[14])));
      }
      assert.ok(worst < 5, `upper-arm direction error ${worst.toFixed(2)}°`);
      assert.match(page.url(), new RegExp(`avatar=${avatarId}`));
      console.log(`     ${file} with ${motion}: worst upper-arm direction error ${worst.toFixed(3)}° over ${frames.length} frames`);
      await shot(`motion-avatar-${file.replace(/\W+/g, "-")}-${motion.replace(/\W+/g, "-")}`);
    });
  }

  await step("a long 120 fps motion on an avatar: one draw per display frame, pause and seek take effect", async () => {
    // 1,365 frames at 120 fps: test_mocapbank.bvh's rows three times over, 1/120 s apart.
    const text = readFileSync(files.bvh, "utf8");
    const [head, motion] = text.split(/\nMOTION\r?\n/);
    const rows = motion.split(/\r?\n/).slice(2).filter((l) => l.trim());
    const all = [...rows, ...rows, ...rows];
    const bvh = `${head}\nMOTION\nFrames: ${all.length}\nFrame Time: 0.00833333\n${all.join("\n")}\n`;
    const up = await fetch(`${base}/api/motions?filename=long-120fps.bvh`, { method: "POST", body: bvh });
    assert.equal(up.status, 201);
    const id = (await up.json()).id;
    let rec;
    for (let i = 0; i < 600; i++) {
      rec = await getJson(`/api/motions/${id}`);
      if (rec.preprocessState === "done" || rec.preprocessState === "failed") break;
      await new Promise((ok) => setTimeout(ok, 50));
    }
    assert.equal(rec.preprocessState, "done", rec.error);
    assert.ok(rec.frames >= 1064 && rec.fps >= 119, `${rec.frames} frames at ${rec.fps} fps`);
    const avatarId = Number(ids["debug_robot.vrm"].split("/").pop());
    // Display frames counted by requestAnimationFrame over 2 s, with the page's draws and
    // the stream's frames in the same window. How fast the page draws depends on the
    // machine and its load, so it is printed, not asserted; what is asserted holds on
    // any machine: the motion plays, and the page draws at most once per display frame
    // (the latest frame; those that came in between are skipped), which is what keeps a
    // 120 fps motion as smooth as a still model.
    const rate = () => page.evaluate(() => new Promise((ok) => {
      const p = window.charkitConsole.page;
      const drawn0 = p.drawn ?? 0;
      const received0 = p.received ?? 0;
      let n = 0;
      const t0 = performance.now();
      const tick = () => {
        n++;
        const t = performance.now() - t0;
        if (t < 2000) requestAnimationFrame(tick);
        else ok({ fps: n / (t / 1000), ticks: n, drawn: (p.drawn ?? 0) - drawn0, received: (p.received ?? 0) - received0 });
      };
      requestAnimationFrame(tick);
    }));
    await page.goto(`${base}/models/${avatarId}`);
    await page.waitForFunction(() => window.charkitConsole.page?.loaded === true, null, { timeout: 30000 });
    const still = await rate();
    await page.goto(`${base}/motions/${id}?avatar=${avatarId}`);
    await page.waitForFunction((a) => window.charkitConsole.page?.avatar?.id === a && window.charkitConsole.page.avatar.loaded &&
      window.charkitConsole.page.anglesLoaded > 0 && window.charkitConsole.page.state === "playing", avatarId, { timeout: 30000 });
    const moving = await rate();
    console.log(`     model page ${still.fps.toFixed(1)} fps; motion page ${moving.fps.toFixed(1)} fps, ` +
      `${moving.drawn} draws for ${moving.ticks} display frames while ${moving.received} frames arrived in 2 s`);
    assert.ok(moving.received > 10, `only ${moving.received} frames arrived in 2 s: the motion did not play`);
    assert.ok(moving.drawn > 0, "the page drew nothing while the motion played");
    assert.ok(moving.drawn <= moving.ticks + 1,
      `the page drew ${moving.drawn} times in ${moving.ticks} display frames: more than once per display frame`);
    // Pause and seek take effect: the state the server confirms, the frame drawn on the
    // avatar. Their latency, timed in the page from the control's event, is printed.
    const median = (xs) => xs.sort((a, b) => a - b)[1];
    const timed = (what, target) => page.evaluate(([w, t]) => new Promise((ok, fail) => {
      const p = window.charkitConsole.page;
      const t0 = performance.now();
      if (w === "pause") document.querySelector('button[aria-label="Pause"]').click();
      else {
        const el = document.querySelector('input[aria-label="Frame"]');
        el.value = String(t);
        el.dispatchEvent(new Event("change"));
      }
      const done = () => (w === "pause" ? p.state === "paused" : p.frame === t && p.avatar.frame === t);
      const check = () => {
        if (done()) ok(performance.now() - t0);
        else if (performance.now() - t0 > 5000) fail(new Error(`${w} did not take effect in 5 s`));
        else setTimeout(check, 2);
      };
      check();
    }), [what, target]);
    const pauses = [];
    const seeks = [];
    for (let k = 0; k < 3; k++) {
      await page.waitForFunction(() => window.charkitConsole.page.state === "playing");
      await page.waitForTimeout(300);
      pauses.push(Math.round(await timed("pause")));
      seeks.push(Math.round(await timed("seek", 100 + 300 * k)));
      await page.click('button[aria-label="Play"]');
    }
    console.log(`     pause ${pauses.join(", ")} ms; seek ${seeks.join(", ")} ms (median ${median(pauses)}, ${median(seeks)})`);
    await fetch(`${base}/api/motions/${id}`, { method: "DELETE" });
  });

  await step("a motion page without ?avatar= starts on a VRM with a body", async () => {
    const models = (await getJson("/api/models?limit=1000&state=done")).items;
    const withBody = models.filter((m) => m.vrmVersion && m.skinned && m.humanoidBones >= 15);
    assert.ok(withBody.length > 0, "an uploaded VRM has a skin and the required bones");
    await page.goto(`${base}${ids["test_mocapbank.bvh"]}`);
    await page.waitForFunction(() => window.charkitConsole.page?.avatar?.loaded === true, null, { timeout: 30000 });
    const chosen = await page.evaluate(() => window.charkitConsole.page.avatar.id);
    assert.equal(chosen, withBody[0].id, `chose model ${chosen} among ${JSON.stringify(models.map((m) => [m.id, m.originalName, m.skinned, m.humanoidBones]))}`);
  });

  for (const [label, file] of [["valid", "example-1.5.bem"], ["invalid", "broken.bem"]]) {
    await step(`package page lists the codes of charkit bem validate --json (${label})`, async () => {
      await page.goto(base + ids[file]);
      await page.waitForFunction(() => window.charkitConsole.page?.report, null, { timeout: 30000 });
      const shown = await page.evaluate(() => window.charkitConsole.page.codes);
      const onPage = await page.$$eval(".code-group", (els) => [...new Set(els.map((e) => e.dataset.code))].sort());
      let cli;
      try {
        cli = execFileSync(charkit, ["bem", "validate", "--json", label === "valid" ? files.bem : files.badBem]);
      } catch (e) {
        cli = e.stdout;  // exit 1: invalid
      }
      const expected = [...new Set(JSON.parse(cli).files[0].issues.messages.map((m) => m.code))].sort();
      assert.deepEqual(shown, expected);
      assert.deepEqual(onPage, expected);
      // The facts in words, as `bem validate` and `bem inspect` name them.
      const fact = (name) => page.evaluate((n) => [...document.querySelectorAll("dt")].find((d) => d.textContent === n)
        ?.nextElementSibling?.textContent ?? null, name);
      assert.equal(await fact("Container"), JSON.parse(cli).files[0].container);
      assert.equal(await fact("Members"), null, "a single package has no members");
      if (label === "valid") {
        const inspect = JSON.parse(execFileSync(charkit, ["bem", "inspect", "--json", files.bem]));
        await page.waitForSelector("h3 + .table-wrap");
        const target = await fact("Target");
        assert.ok(!target.startsWith("{") && target.includes(inspect.target.characterId), `Target: ${target}`);
        const names = await page.$$eval("h3", (hs) => {
          const t = hs.find((x) => x.textContent === "Textures")?.nextElementSibling;
          const col = [...t.querySelectorAll("th")].findIndex((th) => th.textContent === "Texture");
          return [...t.querySelectorAll("tbody tr")].map((tr) => tr.children[col].textContent);
        });
        assert.deepEqual(names, inspect.textures.map((t) => t.originalName));
      }
      if (label === "invalid") {
        assert.ok(expected.length > 0);
        assert.equal(await page.$(".preview"), null, "an invalid package has no preview");
      } else {
        // The preview: changing an option changes the mesh shown.
        await page.waitForFunction(() => window.charkitConsole.page.preview?.loads >= 1, null, { timeout: 30000 });
        const first = await page.evaluate(() => ({ ...window.charkitConsole.page.preview }));
        assert.equal(first.error, null);
        assert.ok(first.stats.triangles > 0);
        // The user orbits the view; it stays where they left it while options change.
        const camera = () => page.evaluate(() => window.charkitConsole.page.preview.camera);
        const apart = (a, b) => Math.hypot(...a.map((v, i) => v - b[i]));
        const settled = async () => {
          let last = await camera();
          for (;;) {
            await page.waitForTimeout(150);
            const now = await camera();
            if (apart(now, last) < 1e-6) return now;
            last = now;
          }
        };
        const framed = await settled();
        const box = await page.locator(".preview .stage").boundingBox();
        await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
        await page.mouse.down();
        await page.mouse.move(box.x + box.width / 2 + 140, box.y + box.height / 2 + 40, { steps: 8 });
        await page.mouse.up();
        const orbited = await settled();
        assert.ok(apart(orbited, framed) > 1e-3, "the drag did not orbit the view");
        const choices = await page.$$eval("select[data-group]", (sels) => sels.map((s) => ({
          group: s.dataset.group, value: s.value, all: [...s.options].map((o) => o.value) })));
        let changed = null;
        for (const c of choices) {
          for (const v of c.all.filter((x) => x !== c.value)) {
            const loads = await page.evaluate(() => window.charkitConsole.page.preview.loads);
            await page.selectOption(`select[data-group="${c.group}"]`, v);
            await page.waitForFunction((n) => window.charkitConsole.page.preview.loads > n && !window.charkitConsole.page.preview.busy, loads, { timeout: 30000 });
            const now = await page.evaluate(() => ({ ...window.charkitConsole.page.preview }));
            assert.equal(now.error, null);
            assert.ok(now.options.includes(`${c.group}:${v}`), now.options);
            if (now.stats.triangles !== first.stats.triangles || now.stats.primitives !== first.stats.primitives) {
              changed = `${c.group}:${v}: ${first.stats.triangles} → ${now.stats.triangles} triangles`;
              break;
            }
          }
          if (changed) break;
        }
        assert.ok(changed, "no option changed the previewed mesh");
        const kept = await settled();
        assert.ok(apart(kept, orbited) < 1e-4, `the view moved from ${orbited} to ${kept} when the selection changed`);
        // Back to the first selection (the last one may draw nothing): "Frame model" frames it as at first.
        for (const c of choices) {
          if ((await page.inputValue(`select[data-group="${c.group}"]`)) === c.value) continue;
          const loads = await page.evaluate(() => window.charkitConsole.page.preview.loads);
          await page.selectOption(`select[data-group="${c.group}"]`, c.value);
          await page.waitForFunction((n) => window.charkitConsole.page.preview.loads > n && !window.charkitConsole.page.preview.busy, loads, { timeout: 30000 });
        }
        await page.click('.preview button:has-text("Frame model")');
        const reframed = await settled();
        assert.ok(apart(reframed, framed) < 1e-4, `Frame model put the camera at ${reframed}, not ${framed}`);
        // Texture thumbnails decoded by the server, decoded again by Chromium.
        const summary = await page.evaluate(() => window.charkitConsole.page.summary);
        await page.waitForFunction((n) => [...document.querySelectorAll("img.thumb")]
          .filter((i) => i.complete && i.naturalWidth > 0).length === n, summary.textures.length);
        const sizes = await page.$$eval("img.thumb", (imgs) => imgs.map((i) => [i.naturalWidth, i.naturalHeight]));
        assert.deepEqual(sizes, summary.textures.map((t) => [Math.min(t.width, 64), Math.min(t.height, 64)]));
        console.log(`     preview: ${changed}`);
      }
      await shot(`package-${label}`);
    });
  }

  await step("drivers panel: a pingpong driver moves the preview, stop returns the base pose", async () => {
    const up = await fetch(`${base}/api/packages?filename=example-1.5-drivers.bem`, { method: "POST",
      body: readFileSync(files.drivers) });
    assert.equal(up.status, 201);
    const rec = await up.json();
    try {
      await page.goto(`${base}/packages/${rec.id}`);
      await page.waitForFunction(() => window.charkitConsole.page?.preview?.loads >= 1 &&
        window.charkitConsole.page.drivers?.frame, null, { timeout: 60000 });
      const d0 = await page.evaluate(() => window.charkitConsole.page.drivers);
      assert.deepEqual(d0.header.drivers.map((d) => d.id), ["wave", "glow", "blink"]);
      assert.equal(await page.$$eval(".drivers .driver", (els) => els.length), 3);
      // At 1280×800 the panel sits beside the preview, so the model stays in view while a driver runs.
      const stageBox = await page.locator(".preview .stage").boundingBox();
      const panelBox = await page.locator(".drivers-panel").boundingBox();
      assert.ok(panelBox.x >= stageBox.x + stageBox.width, `the drivers panel (x ${panelBox.x}) is not beside the stage (right ${stageBox.x + stageBox.width})`);
      assert.ok(panelBox.y < stageBox.y + stageBox.height, "the drivers panel starts below the stage");
      assert.equal(d0.frame.drivers[0].state, "stopped");
      assert.deepEqual(d0.weights, [0], "the preview has the channel's one morph target, at 0");
      await page.waitForTimeout(300);
      const rest = await stagePixels();
      await page.click('button[data-driver="wave"][data-action="start"]');
      await page.waitForFunction(() => {
        const d = window.charkitConsole.page.drivers;
        return d.frame.drivers[0].state === "playing" && d.weights[0] > 0.4;
      }, null, { timeout: 15000 });
      // Paused: the pose holds still for the pixel comparison.
      await page.click('button[data-driver="wave"][data-action="pause"]');
      await page.waitForFunction(() => window.charkitConsole.page.drivers.frame.drivers[0].state === "paused");
      const paused = await page.evaluate(() => window.charkitConsole.page.drivers);
      const tick = paused.frame.parameters.open;
      assert.ok(tick > 0, `tick ${tick}`);
      assert.ok(Math.abs(paused.weights[0] - tick / 100) < 1e-6, `weight ${paused.weights[0]} for tick ${tick}`);
      assert.match(await page.textContent('.driver[data-driver="wave"] .driver-state'), /paused/);
      await page.waitForTimeout(200);
      const moved = changedFraction(rest, await stagePixels());
      assert.ok(moved > 0.005, `${(moved * 100).toFixed(2)} % of the stage changed while the driver held open = ${tick}`);
      await shot("package-drivers");
      await page.click('button[data-driver="wave"][data-action="stop"]');
      await page.waitForFunction(() => window.charkitConsole.page.drivers.frame.drivers[0].state === "stopped");
      const stopped = await page.evaluate(() => window.charkitConsole.page.drivers);
      assert.equal(stopped.frame.parameters.open, 0);
      assert.deepEqual(stopped.weights, [0]);
      await page.waitForTimeout(200);
      const back = changedFraction(rest, await stagePixels());
      assert.ok(back < 0.001, `${(back * 100).toFixed(2)} % of the stage differs from the base pose after stop`);
      assert.deepEqual(stopped.errors, []);
      console.log(`     drivers: open = ${tick} changed ${(moved * 100).toFixed(1)} % of the stage; after stop ${(back * 100).toFixed(2)} %`);
    } finally {
      await fetch(`${base}/api/packages/${rec.id}`, { method: "DELETE" });
    }
  });

  await step("live: the channel list, a viewer waiting, the publisher's frames, the publisher leaving", async () => {
    await page.goto(`${base}/live`);
    await page.waitForFunction(() => Array.isArray(window.charkitConsole.page?.channels));
    assert.equal(await page.getAttribute('nav a[href="/live"]', "aria-current"), "");
    await page.fill('input[aria-label="Channel name"]', "test-cam");
    await page.click('form button[type="submit"]');
    await page.waitForFunction(() => window.charkitConsole.page?.name === "live" && window.charkitConsole.page.publisher === "waiting");
    assert.match(await page.textContent('[role="status"]'), /No publisher on this channel yet/);
    // A publisher in node (WebSocket is global in node 22; use the page's instead).
    await page.evaluate(async (url) => {
      const ws = new WebSocket(url);
      ws.binaryType = "arraybuffer";
      await new Promise((r) => ws.addEventListener("open", r));
      for (let f = 0; f < 5; f++) {
        const buf = new ArrayBuffer(572);
        const v = new DataView(buf);
        v.setUint32(0, f, true);
        v.setFloat32(4, f * 33.3, true);
        for (let i = 0; i < 33; i++) {
          v.setFloat32(8 + i * 16, 0.3 + i / 100, true);
          v.setFloat32(12 + i * 16, 0.2 + i / 50, true);
          v.setFloat32(20 + i * 16, 1, true);
        }
        for (let a = 0; a < 9; a++) v.setFloat32(536 + a * 4, 1, true);
        ws.send(buf);
        await new Promise((r) => setTimeout(r, 50));
      }
      window.__publisher = ws;
    }, `ws://127.0.0.1:${port}/api/live/test-cam?role=publish`);
    await page.waitForFunction(() => window.charkitConsole.page.frame === 4);
    assert.equal(await page.evaluate(() => window.charkitConsole.page.publisher), "live");
    await shot("live");
    // The list shows the channel with its publisher and one viewer (this page, in a second tab).
    const list = await page.context().newPage();
    await list.goto(`${base}/live`);
    await list.waitForFunction(() => window.charkitConsole.page?.channels?.some((c) => c.name === "test-cam"));
    const row = await list.evaluate(() => window.charkitConsole.page.channels.find((c) => c.name === "test-cam"));
    assert.deepEqual(row, { name: "test-cam", publishing: true, viewers: 1 });
    assert.match(await list.textContent('tr[data-channel="test-cam"]'), /live/);
    await list.close();
    // The publisher leaves: the page says so and keeps the last frame.
    await page.evaluate(() => window.__publisher.close());
    await page.waitForFunction(() => window.charkitConsole.page.publisher === "left");
    assert.match(await page.textContent('[role="status"]'), /The publisher left/);
    assert.equal(await page.evaluate(() => window.charkitConsole.page.frame), 4);
  });

  await step("narrow window and the dark theme", async () => {
    await page.setViewportSize({ width: 420, height: 800 });
    await page.goto(base + "/");
    await ready();
    await page.click("#theme");
    const theme = await page.evaluate(() => document.documentElement.dataset.theme);
    assert.ok(theme === "dark" || theme === "light");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 1, `the page is ${overflow} px wider than the window`);
    await shot("dashboard-narrow");
    // Every kind of page fits 420 px (docs/console.md): no horizontal scrolling.
    const drivers = await fetch(`${base}/api/packages?filename=example-1.5-drivers.bem`, { method: "POST",
      body: readFileSync(files.drivers) });
    const driversId = (await drivers.json()).id;
    const wide = [];
    for (const path of ["/models", "/motions", "/packages", "/live", "/live/test-cam", ids["debug_robot.vrm"],
      ids["test_mocapbank.bvh"], ids["example-1.5.bem"], `/packages/${driversId}`, ids["broken.bem"]].filter(Boolean)) {
      await page.goto(base + path);
      await ready();
      await page.waitForTimeout(path.startsWith("/packages/") ? 1500 : 500);
      const over = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      if (over > 1) {
        const culprits = await page.evaluate(() => [...document.querySelectorAll("body *")]
          .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1 && !e.closest(".table-wrap"))
          .slice(0, 4).map((e) => `${e.tagName.toLowerCase()}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`));
        wide.push(`${path}: ${over} px (${culprits.join(", ")})`);
      }
    }
    await shot("package-drivers-narrow");
    await fetch(`${base}/api/packages/${driversId}`, { method: "DELETE" });
    assert.deepEqual(wide, [], "pages wider than 420 px");
  });

  await step("a server with tokens sends the console to its login page, and the token logs in", async () => {
    const data = join(dataDir, "secured");
    const secret = execFileSync(charkit, ["token", "create", "--scope", "read", "--name", "browser", "--data", data])
      .toString().trim();
    const securedPort = await startServer(data);
    const p2 = await context.newPage();
    await p2.goto(`http://127.0.0.1:${securedPort}/models`);
    await p2.waitForURL(/\/login$/);
    await p2.fill('input[name="token"]', "ckt_not_a_token");
    await p2.click("button");
    await p2.waitForURL(/\/login\?failed=1$/);
    await p2.fill('input[name="token"]', secret);
    await p2.click("button");
    await p2.waitForURL(`http://127.0.0.1:${securedPort}/`);
    await p2.waitForFunction(() => window.charkitConsole?.page?.name === "dashboard");
    assert.equal(await p2.evaluate(() => window.charkitConsole.session?.authenticated), true);
    await p2.screenshot({ path: join(outDir, "dashboard-logged-in.png") });
    await p2.close();
  });

  await step("failed records: the model page shows the intake error, the motion page its record and delete", async () => {
    const post = async (kind, name, body) => {
      const r = await fetch(`${base}/api/${kind}?filename=${name}`, { method: "POST", body });
      assert.ok(r.status === 201 || r.status === 200, `${name}: ${r.status}`);
      return (await r.json()).id;
    };
    const settled = async (path, field) => {
      for (let i = 0; i < 400; i++) {
        const r = await getJson(path);
        if (r[field] !== "pending" && r[field] !== "running") return r;
        await new Promise((ok) => setTimeout(ok, 50));
      }
      throw new Error(`${path} did not settle`);
    };
    const modelId = await post("models", "truncated.glb", "glTF\x02\x00\x00\x00 not really");
    const model = await settled(`/api/models/${modelId}`, "intakeState");
    assert.equal(model.intakeState, "failed");
    const errorsBefore = consoleErrors.length;
    await page.goto(`${base}/models/${modelId}`);
    await page.waitForFunction(() => window.charkitConsole.page?.name === "model" && window.charkitConsole.page.error);
    const shown = await page.textContent(".stage");
    assert.ok(shown.includes(model.error), `the stage shows “${shown}”, not the intake error “${model.error}”`);
    assert.equal(await page.$(".stage canvas"), null, "a preview was attempted");
    assert.ok(!(await page.textContent("aside")).includes("Humanoid bones"), "facts of a model that was never read");
    assert.equal(consoleErrors.length, errorsBefore);

    const motionId = await post("motions", "broken.bvh", "HIERARCHY\nROOT Hips\n{\n");
    const motion = await settled(`/api/motions/${motionId}`, "preprocessState");
    assert.equal(motion.preprocessState, "failed");
    await page.goto(`${base}/motions/${motionId}`);
    await page.waitForFunction(() => window.charkitConsole.page?.state === "failed");
    assert.ok((await page.textContent(".error-text")).includes(motion.error));
    assert.ok((await page.textContent("aside")).includes("broken.bvh"));
    assert.equal(await page.getAttribute('aside a[download]', "href"), motion.contentUrl);
    page.once("dialog", (d) => d.accept());
    await page.click('button[aria-label="Delete broken.bvh"]');
    await page.waitForFunction(() => window.charkitConsole.page?.kind === "motions");
    assert.equal((await fetch(`${base}/api/motions/${motionId}`)).status, 404);
    assert.equal((await fetch(`${base}/api/models/${modelId}`)).status, 200);
    await fetch(`${base}/api/models/${modelId}`, { method: "DELETE" });
  });

  await step("delete with confirmation removes the record from the list", async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${base}/packages`);
    await page.waitForFunction(() => window.charkitConsole.page?.kind === "packages" && window.charkitConsole.page.rows.length === 2);
    page.once("dialog", (d) => d.dismiss());
    await page.click('button[aria-label="Delete broken.bem"]');
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.charkitConsole.page.rows.length), 2, "deleted without confirmation");
    page.once("dialog", (d) => d.accept());
    await page.click('button[aria-label="Delete broken.bem"]');
    await page.waitForFunction(() => window.charkitConsole.page.rows.length === 1);
    assert.equal((await fetch(`${base}/api${ids["broken.bem"]}`)).status, 404);
  });

  await step("no script errors", async () => {
    assert.deepEqual(consoleErrors.filter((e) => !/status of 40[49]/.test(e)), []);
  });
} finally {
  await browser?.close();
  for (const srv of servers) srv.kill("SIGTERM");
}
console.log(failed ? "FAILED" : "all console checks passed");
process.exit(failed ? 1 : 0);
