// The console bundle ships the licence texts of the npm packages it holds
// (build.mjs writes assets/THIRD_PARTY_NOTICES.txt from esbuild's inputs).
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const web = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

test("the bundle's notices give three's and three-vrm's licences", () => {
  const out = mkdtempSync(join(tmpdir(), "console-"));
  try {
    execFileSync(process.execPath, [join(web, "build.mjs"), out], { stdio: "pipe" });
    const notices = readFileSync(join(out, "assets/THIRD_PARTY_NOTICES.txt"), "utf8");
    const bundle = readFileSync(join(out, "assets/console.js"), "utf8");
    for (const dir of ["three", "@pixiv/three-vrm"]) {
      const pkg = JSON.parse(readFileSync(join(web, "node_modules", dir, "package.json"), "utf8"));
      const licence = readFileSync(join(web, "node_modules", dir, "LICENSE"), "utf8").trim();
      assert.ok(notices.includes(`${pkg.name} ${pkg.version} (${pkg.license})`), pkg.name);
      assert.ok(notices.includes(licence), `${pkg.name}'s licence text`);
    }
    // three is in the bundle (its revision constant), so its notice must be.
    assert.match(bundle, /REVISION/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
