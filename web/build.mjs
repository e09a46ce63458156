// Builds the console into one folder that `charkit serve --web DIR` serves:
//   DIR/index.html, DIR/assets/console.js (three.js and three-vrm bundled,
//   minified), DIR/assets/console.css.
// Usage: node build.mjs [OUTDIR]   (default: web/dist)
import { build } from "esbuild";
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "dist"));
await mkdir(join(out, "assets"), { recursive: true });
await build({
  entryPoints: [join(here, "src/main.js")],
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "linked",  // three.js's and three-vrm's licence texts: assets/console.js.LEGAL.txt
  outfile: join(out, "assets/console.js"),
  logLevel: "warning",
});
await copyFile(join(here, "src/index.html"), join(out, "index.html"));
await copyFile(join(here, "src/console.css"), join(out, "assets/console.css"));
console.log(`console built into ${out}`);
