// Checks a GLB with two independent readers and prints one JSON summary:
//  - the Khronos glTF validator (every error fails the check),
//  - three.js's GLTFLoader, the loader a web viewer uses (it must parse the
//    file; the summary lists what it built so a test can compare).
// Usage: node check_glb.mjs FILE.glb
// Exit status: 0 the file passed both, 1 it did not, 2 usage or I/O error.
import { readFileSync } from 'node:fs';
import validator from 'gltf-validator';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { Texture } from 'three';

const file = process.argv[2];
if (!file) {
  console.error('usage: node check_glb.mjs FILE.glb');
  process.exit(2);
}
let bytes;
try {
  bytes = readFileSync(file);
} catch (e) {
  console.error(`cannot read ${file}: ${e.message}`);
  process.exit(2);
}

const summary = { file, validator: null, three: null, ok: true };

const report = await validator.validateBytes(new Uint8Array(bytes), {
  maxIssues: 100,
  externalResourceFunction: () => Promise.reject(new Error('external resources are not allowed')),
});
summary.validator = {
  errors: report.issues.numErrors,
  warnings: report.issues.numWarnings,
  messages: report.issues.messages
    .filter((m) => m.severity <= 1)
    .map((m) => `${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer ?? ''}: ${m.message}`),
};
if (report.issues.numErrors > 0) summary.ok = false;

// Node has no DOM to decode images into; the images are checked by the
// validator (and by our own tests), so three.js gets a placeholder texture.
const loader = new GLTFLoader();
loader.register((parser) => {
  parser.loadImageSource = async () => new Texture();
  return { name: 'charkit_no_dom_images' };
});
const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
try {
  const gltf = await new Promise((resolve, reject) => loader.parse(ab, '', resolve, reject));
  const meshes = [];
  gltf.scene.traverse((o) => {
    if (o.isMesh || o.isSkinnedMesh) {
      meshes.push({
        node: o.name,
        skinned: !!o.isSkinnedMesh,
        vertices: o.geometry.attributes.position?.count ?? 0,
        indices: o.geometry.index?.count ?? 0,
        attributes: Object.keys(o.geometry.attributes).sort(),
        morphTargets: o.geometry.morphAttributes.position?.length ?? 0,
        morphNames: Object.keys(o.morphTargetDictionary ?? {}).sort(),
        material: o.material?.name ?? null,
      });
    }
  });
  summary.three = {
    meshes,
    gltf_meshes: (await gltf.parser.getDependencies('mesh')).length,
    materials: (await gltf.parser.getDependencies('material')).map((m) => m.name),
  };
} catch (e) {
  summary.three = { error: String(e && e.message ? e.message : e) };
  summary.ok = false;
}

console.log(JSON.stringify(summary, null, 2));
process.exit(summary.ok ? 0 : 1);
