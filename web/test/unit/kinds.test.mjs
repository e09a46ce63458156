// Which collection the console uploads a file to (web/src/kinds.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { extensionOf, glbJson, kindOf } from "../../src/kinds.js";

test("extensions decide for unambiguous formats, case-insensitively", () => {
  assert.equal(kindOf("Avatar.VRM"), "models");
  assert.equal(kindOf("walk.bvh"), "motions");
  assert.equal(kindOf("pose.json"), "motions");
  assert.equal(kindOf("dress.bem"), "packages");
  assert.equal(kindOf("dress.zip"), "packages");
  assert.equal(kindOf("rig.fbx"), "models");
  assert.equal(kindOf("notes.txt"), null);
  assert.equal(kindOf("noextension"), null);
  assert.equal(kindOf(".bvh"), null, "a dot file has no extension");
});

test("extensionOf keeps only the last name of a path", () => {
  assert.equal(extensionOf("dir.v2/model"), "");
  assert.equal(extensionOf("C:\\x\\y.GLB"), "glb");
});

test("glTF with meshes is a model, with only animations a motion", () => {
  assert.equal(kindOf("a.glb", { meshes: [{}], animations: [{}] }), "models");
  assert.equal(kindOf("a.glb", { animations: [{}] }), "motions");
  assert.equal(kindOf("a.gltf", { meshes: [], animations: [{}, {}] }), "motions");
  assert.equal(kindOf("a.gltf", {}), "models");
  assert.equal(kindOf("a.glb", null), "models");
});

/** A GLB built by hand (glTF 2.0 §4.4): 12-byte header, one JSON chunk. */
function glb(json, declared = null) {
  const text = new TextEncoder().encode(JSON.stringify(json));
  const padded = Math.ceil(text.length / 4) * 4;
  const buf = new ArrayBuffer(20 + padded);
  const v = new DataView(buf);
  v.setUint32(0, 0x46546c67, true);  // "glTF"
  v.setUint32(4, 2, true);
  v.setUint32(8, 20 + padded, true);
  v.setUint32(12, declared ?? padded, true);
  v.setUint32(16, 0x4e4f534a, true);  // "JSON"
  new Uint8Array(buf, 20).fill(0x20);
  new Uint8Array(buf, 20).set(text);
  return buf;
}

test("glbJson reads the JSON chunk and refuses what is not a GLB", () => {
  assert.deepEqual(glbJson(glb({ asset: { version: "2.0" }, animations: [{}] })),
    { asset: { version: "2.0" }, animations: [{}] });
  assert.equal(glbJson(new ArrayBuffer(8)), null);
  const wrongMagic = glb({ a: 1 });
  new DataView(wrongMagic).setUint32(0, 0x12345678, true);
  assert.equal(glbJson(wrongMagic), null);
  assert.equal(glbJson(glb({ a: 1 }, 4096)), null, "a chunk longer than the bytes read");
});
