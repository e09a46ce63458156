// Builds the console into one folder that `charkit serve --web DIR` serves:
//   DIR/index.html, DIR/assets/console.js (three.js and three-vrm bundled,
//   minified), DIR/assets/console.css, and DIR/assets/THIRD_PARTY_NOTICES.txt:
//   the name, version, licence and licence text of every npm package whose
//   code the bundle holds (read from the bundle's inputs, so it follows them).
// Usage: node build.mjs [OUTDIR]   (default: web/dist)
import { build } from "esbuild";
import { copyFile, mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "dist"));
await mkdir(join(out, "assets"), { recursive: true });
const result = await build({
  entryPoints: [join(here, "src/main.js")],
  metafile: true,
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "linked",  // three.js's and three-vrm's licence texts: assets/console.js.LEGAL.txt
  outfile: join(out, "assets/console.js"),
  logLevel: "warning",
});
await writeFile(join(out, "assets/THIRD_PARTY_NOTICES.txt"), await notices(result.metafile));
await copyFile(join(here, "src/index.html"), join(out, "index.html"));
await copyFile(join(here, "src/console.css"), join(out, "assets/console.css"));
console.log(`console built into ${out}`);

// The npm packages the bundle holds code of, with their licence texts.
async function notices(metafile) {
  const roots = new Set();
  for (const input of Object.keys(metafile.inputs)) {
    const m = input.match(/^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//);
    if (m) roots.add(m[1]);
  }
  const parts = [
    "Third-party software in the charkit web console (assets/console.js)\n" +
      "====================================================================\n",
  ];
  for (const root of [...roots].sort()) {
    const dir = resolve(root);
    const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    const licence = (await readdir(dir)).find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    if (!licence) throw new Error(`${pkg.name}: no licence file in ${dir}`);
    const text = await readFile(join(dir, licence), "utf8");
    parts.push(`${pkg.name} ${pkg.version} (${pkg.license})\n${"-".repeat(40)}\n${text.trim()}\n`);
  }
  return parts.join("\n");
}
