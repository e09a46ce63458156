// Which collection an uploaded file goes to, from its name and content
// (docs/console.md §Uploads). Pure: unit-tested in web/test/unit/kinds.test.mjs.

const byExtension = {
  vrm: "models",
  bvh: "motions",
  json: "motions",  // keypoint JSON (docs/contracts/keypoints.md §6)
  bem: "packages",
  zip: "packages",  // BEM ZIP containers
  fbx: "models",    // FBX motions are not told apart from models by their header
};

/** The file name's extension, lower case, without the dot ("" when none). */
export function extensionOf(name) {
  const base = String(name).split(/[\\/]/).pop();
  const dot = base.lastIndexOf(".");
  return dot <= 0 ? "" : base.slice(dot + 1).toLowerCase();
}

/**
 * The kind ("models", "motions", "packages") of a file, or null when charkit
 * takes no file with that extension. `gltf` is the glTF JSON of a .glb/.gltf
 * (null when unreadable): a document with meshes is a model, one with
 * animations and no meshes a motion.
 */
export function kindOf(name, gltf = null) {
  const ext = extensionOf(name);
  if (ext in byExtension) return byExtension[ext];
  if (ext === "glb" || ext === "gltf") {
    const meshes = Array.isArray(gltf?.meshes) ? gltf.meshes.length : 0;
    const animations = Array.isArray(gltf?.animations) ? gltf.animations.length : 0;
    return meshes === 0 && animations > 0 ? "motions" : "models";
  }
  return null;
}

/** The JSON chunk of a GLB (ArrayBuffer of at least its first chunk), or null. */
export function glbJson(buffer) {
  if (buffer.byteLength < 20) return null;
  const v = new DataView(buffer);
  if (v.getUint32(0, true) !== 0x46546c67 || v.getUint32(16, true) !== 0x4e4f534a) return null;
  const length = v.getUint32(12, true);
  if (20 + length > buffer.byteLength) return null;
  try {
    return JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 20, length)));
  } catch {
    return null;
  }
}

/** Reads as much of a File as kindOf needs and answers its kind. */
export async function classify(file) {
  const ext = extensionOf(file.name);
  if (ext === "glb") {
    const head = await file.slice(0, 20).arrayBuffer();
    if (head.byteLength < 20) return kindOf(file.name);
    const length = new DataView(head).getUint32(12, true);
    if (length > 64 << 20) return kindOf(file.name);
    return kindOf(file.name, glbJson(await file.slice(0, 20 + length).arrayBuffer()));
  }
  if (ext === "gltf" && file.size <= 64 << 20) {
    try {
      return kindOf(file.name, JSON.parse(await file.text()));
    } catch {
      return kindOf(file.name);
    }
  }
  return kindOf(file.name);
}
