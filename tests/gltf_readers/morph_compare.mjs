// Checks `charkit deform morph` output against three.js's own reading of the
// input: for every mesh, output POSITION = input POSITION + Σ weight × the
// target's position deltas (three.js morphAttributes, relative), within 1e-5.
// A target is NAME (three.js reads mesh.extras.targetNames) or its index.
// Usage: node morph_compare.mjs IN.glb OUT.glb NAME=W [NAME=W …]
// Exit status: 0 equal, 1 not, 2 usage or I/O error.
import { readFileSync } from 'node:fs';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { Texture } from 'three';

const [input, output, ...pairs] = process.argv.slice(2);
if (!input || !output || pairs.length === 0) {
  console.error('usage: node morph_compare.mjs IN.glb OUT.glb NAME=W [NAME=W …]');
  process.exit(2);
}
const weights = Object.fromEntries(pairs.map((p) => [p.slice(0, p.lastIndexOf('=')), Number(p.slice(p.lastIndexOf('=') + 1))]));

async function load(file) {
  const bytes = readFileSync(file);
  const loader = new GLTFLoader();
  loader.register((parser) => {
    parser.loadImageSource = async () => new Texture();
    return { name: 'charkit_no_dom_images' };
  });
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await new Promise((resolve, reject) => loader.parse(ab, '', resolve, reject));
  const meshes = [];
  gltf.scene.traverse((o) => { if (o.isMesh) meshes.push(o); });
  return meshes;
}

const before = await load(input);
const after = await load(output);
if (before.length !== after.length) {
  console.error(`mesh count ${before.length} vs ${after.length}`);
  process.exit(1);
}
let checked = 0;
let worst = 0;
for (let m = 0; m < before.length; m++) {
  const a = before[m];
  const b = after[m];
  const dict = a.morphTargetDictionary ?? {};
  const deltas = a.geometry.morphAttributes.position ?? [];
  const pa = a.geometry.attributes.position.array;
  const pb = b.geometry.attributes.position.array;
  if (pa.length !== pb.length) { console.error(`mesh ${m}: vertex count differs`); process.exit(1); }
  const expect = Float64Array.from(pa);
  for (const [name, w] of Object.entries(weights)) {
    const t = dict[name] ?? (/^[0-9]+$/.test(name) ? Number(name) : undefined);
    if (t === undefined || !deltas[t]) continue;
    const d = deltas[t].array;
    for (let i = 0; i < expect.length; i++) expect[i] += w * d[i];
    checked++;
  }
  for (let i = 0; i < expect.length; i++) worst = Math.max(worst, Math.abs(expect[i] - pb[i]));
}
console.log(JSON.stringify({ input, output, targetsChecked: checked, maxPositionError: worst }));
if (checked === 0) { console.error('no named target found by three.js'); process.exit(1); }
process.exit(worst <= 1e-5 ? 0 : 1);
