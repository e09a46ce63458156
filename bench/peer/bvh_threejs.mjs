// Peer for bench/compare_bvh.sh: the same BVH → MediaPipe-33 NDJSON
// conversion (docs/contracts/keypoints.md §2, skeleton-topology.md) written
// the way a Node project would: three.js BVHLoader parses the file, an
// AnimationMixer poses the skeleton frame by frame, updateMatrixWorld gives
// world joint positions, then the projection of the model and motion format
// contract (§2.1) and NDJSON lines.
//   node bench/peer/bvh_threejs.mjs IN.bvh OUT.ndjson
// Uses the three.js installed under tests/gltf_readers/node_modules (no new packages).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const threeDir = path.resolve(here, '../../tests/gltf_readers/node_modules/three');
const THREE = await import(pathToFileURL(path.join(threeDir, 'build/three.module.js')).href);
const { BVHLoader } = await import(pathToFileURL(path.join(threeDir, 'examples/jsm/loaders/BVHLoader.js')).href);

const [inPath, outPath] = process.argv.slice(2);
if (!inPath || !outPath) {
  console.error('usage: node bvh_threejs.mjs IN.bvh OUT.ndjson');
  process.exit(2);
}

// The default table of the model and motion format contract (§2.2), matched
// case-insensitively.
const TABLE = {
  0: ['Head', 'Neck1', 'Head_Nub'],
  11: ['LeftShoulder', 'LeftArm', 'LShoulder'], 12: ['RightShoulder', 'RightArm', 'RShoulder'],
  13: ['LeftForeArm', 'LeftElbow', 'LElbow'], 14: ['RightForeArm', 'RightElbow', 'RElbow'],
  15: ['LeftHand', 'LeftWrist', 'LHand'], 16: ['RightHand', 'RightWrist', 'RHand'],
  23: ['LeftUpLeg', 'LeftHip', 'LHipJoint'], 24: ['RightUpLeg', 'RightHip', 'RHipJoint'],
  25: ['LeftLeg', 'LeftKnee', 'LKnee'], 26: ['RightLeg', 'RightKnee', 'RKnee'],
  27: ['LeftFoot', 'LeftAnkle', 'LAnkle'], 28: ['RightFoot', 'RightAnkle', 'RAnkle'],
  31: ['LeftToeBase', 'LeftToe', 'LToe'], 32: ['RightToeBase', 'RightToe', 'RToe'],
};
// skeleton-topology.md §2: -1 pelvis, -2 shoulder centre.
const PARENT = [-2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 11, 12, 13, 14, 15, 16, 15, 16, 15, 16,
  -1, -1, 23, 24, 25, 26, 27, 28, 27, 28];
const ORDER = [11, 12, 23, 24, 13, 14, 15, 16, 25, 26, 27, 28, 31, 32, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
  17, 18, 19, 20, 21, 22, 29, 30];
const ESTIMATED = new Set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 17, 18, 19, 20, 21, 22, 29, 30]);

const text = fs.readFileSync(inPath, 'utf8');
const { skeleton, clip } = new BVHLoader().parse(text);
const bones = skeleton.bones;
const byName = new Map(bones.map((b, i) => [b.name.toLowerCase(), i]));
const mapped = new Array(33).fill(-1);
for (const [p, names] of Object.entries(TABLE)) {
  for (const n of names) {
    const j = byName.get(n.toLowerCase());
    if (j !== undefined) { mapped[+p] = j; break; }
  }
}
let pelvisJoint = -1;
if (mapped[23] < 0 || mapped[24] < 0) {
  for (const n of ['hips', 'hip', 'pelvis']) if (byName.has(n)) { pelvisJoint = byName.get(n); break; }
  if (pelvisJoint < 0) pelvisJoint = 0;
}

const root = bones[0];
const group = new THREE.Object3D();
group.add(root);
const mixer = new THREE.AnimationMixer(group);
const action = mixer.clipAction(clip);
action.setLoop(THREE.LoopOnce);  // the last frame must not wrap round to frame 0
action.clampWhenFinished = true;
action.play();
const times = clip.tracks[0].times;
const frameTime = clip.tracks[0].times.length > 1 ? clip.tracks[0].times[1] - clip.tracks[0].times[0] : 1 / 30;
const frames = clip.tracks[0].times.length;
const fpsRaw = 1 / frameTime;
const fps = Math.abs(fpsRaw - Math.round(fpsRaw)) <= 0.001 * Math.round(fpsRaw) ? Math.round(fpsRaw)
  : Math.round(fpsRaw * 1000) / 1000;

// Pass 1: pose every frame, keep pelvis-centred points and angles (the
// natural Node approach: the whole motion in typed arrays), find the scale.
const pts = new Float64Array(frames * 33 * 3);
const conf = new Float64Array(33);
const angles = new Float64Array(frames * 9);
const wp = new Float64Array(bones.length * 3);
const p = new Float64Array(33 * 3);
const v = new THREE.Vector3();

const sub = (a, b) => [p[a * 3] - p[b * 3], p[a * 3 + 1] - p[b * 3 + 1], p[a * 3 + 2] - p[b * 3 + 2]];
function cosine(a, b) {
  const na = Math.hypot(a[0], a[1], a[2]), nb = Math.hypot(b[0], b[1], b[2]);
  if (!(na > 1e-9) || !(nb > 1e-9)) return 0;
  const c = (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) / (na * nb);
  return Math.min(1, Math.max(-1, c));
}
let maxAbs = 0;
for (let f = 0; f < frames; ++f) {
  mixer.setTime(times[f]);
  root.updateMatrixWorld(true);
  for (let j = 0; j < bones.length; ++j) {
    bones[j].getWorldPosition(v);
    wp[j * 3] = v.x; wp[j * 3 + 1] = v.y; wp[j * 3 + 2] = v.z;
  }
  let px, py, pz;
  if (pelvisJoint >= 0) { px = wp[pelvisJoint * 3]; py = wp[pelvisJoint * 3 + 1]; pz = wp[pelvisJoint * 3 + 2]; } else {
    const a = mapped[23] * 3, b = mapped[24] * 3;
    px = (wp[a] + wp[b]) / 2; py = (wp[a + 1] + wp[b + 1]) / 2; pz = (wp[a + 2] + wp[b + 2]) / 2;
  }
  let sc = [0, 0, 0];
  for (const i of ORDER) {
    if (i === 0) sc = [(p[33] + p[36]) / 2, (p[34] + p[37]) / 2, (p[35] + p[38]) / 2];
    if (mapped[i] >= 0) {
      const j = mapped[i] * 3;
      p[i * 3] = wp[j] - px; p[i * 3 + 1] = wp[j + 1] - py; p[i * 3 + 2] = wp[j + 2] - pz;
      conf[i] = 1;
    } else {
      const par = PARENT[i];
      const q = par === -1 ? [0, 0, 0] : par === -2 ? sc : [p[par * 3], p[par * 3 + 1], p[par * 3 + 2]];
      p[i * 3] = q[0]; p[i * 3 + 1] = q[1]; p[i * 3 + 2] = q[2];
      conf[i] = ESTIMATED.has(i) ? 0.5 : 0;
    }
  }
  // Estimation rules (skeleton-topology.md §3): face around the nose, hands
  // along the forearm, heels behind the ankle.
  const across = sub(11, 12);
  let width = Math.hypot(...across);
  const nose = [p[0], p[1], p[2]];
  const up = [nose[0] - sc[0], nose[1] - sc[1], nose[2] - sc[2]];
  if (!(width > 1e-9)) width = Math.hypot(...up);
  const unit = (a, fb) => { const n = Math.hypot(...a); return n > 1e-9 ? a.map((x) => x / n) : fb; };
  const r = unit(across, [1, 0, 0]), u = unit(up, [0, 1, 0]);
  const FACE = [[1, 0.10, 0.05], [2, 0.10, 0.10], [3, 0.10, 0.15], [4, 0.10, -0.05], [5, 0.10, -0.10],
    [6, 0.10, -0.15], [7, 0.05, 0.20], [8, 0.05, -0.20], [9, -0.08, 0.05], [10, -0.08, -0.05]];
  for (const [i, uf, sf] of FACE) if (mapped[i] < 0)
    for (let k = 0; k < 3; ++k) p[i * 3 + k] = nose[k] + u[k] * uf * width + r[k] * sf * width;
  for (let s = 0; s < 2; ++s) {
    const w = 15 + s, e = 13 + s;
    for (const [i, t] of [[17 + s, 0.35], [19 + s, 0.40], [21 + s, 0.25]]) if (mapped[i] < 0)
      for (let k = 0; k < 3; ++k) p[i * 3 + k] = p[w * 3 + k] + (p[w * 3 + k] - p[e * 3 + k]) * t;
    const h = 29 + s, an = 27 + s, toe = 31 + s;
    if (mapped[h] < 0) {
      const foot = sub(toe, an);
      p[h * 3] = p[an * 3] - 0.35 * foot[0]; p[h * 3 + 1] = p[an * 3 + 1] + foot[1]; p[h * 3 + 2] = p[an * 3 + 2] - 0.35 * foot[2];
    }
  }
  const at = (b, a, c) => cosine(sub(a, b), sub(c, b));
  const A = f * 9;
  angles[A] = at(11, 13, 23); angles[A + 1] = at(12, 14, 24); angles[A + 2] = at(13, 11, 15); angles[A + 3] = at(14, 12, 16);
  angles[A + 4] = at(23, 11, 25); angles[A + 5] = at(24, 12, 26); angles[A + 6] = at(25, 23, 27); angles[A + 7] = at(26, 24, 28);
  const spine = [(p[33] + p[36] - p[69] - p[72]) / 2, (p[34] + p[37] - p[70] - p[73]) / 2, (p[35] + p[38] - p[71] - p[74]) / 2];
  angles[A + 8] = cosine(spine, [0, 1, 0]);
  const base = f * 99;
  for (let k = 0; k < 99; ++k) {
    pts[base + k] = p[k];
    const m = Math.abs(p[k]);
    if (m > maxAbs) maxAbs = m;
  }
}
const s = maxAbs > 0 ? 0.35 / maxAbs : 1;

// Pass 2: project (the model and motion format contract §2.1) and write the lines.
const num = (x) => { if (x === 0 || !Number.isFinite(x)) return '0.0'; const t = String(x); return /[.e]/.test(t) ? t : t + '.0'; };
const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
const fd = fs.openSync(outPath, 'w');
let buf = '';
for (let f = 0; f < frames; ++f) {
  let line = `{"frame":${f},"timeMs":${num(f * 1000 / fps)},"points":[`;
  const base = f * 99;
  for (let i = 0; i < 33; ++i) {
    const x = clamp(0.5 + pts[base + i * 3] * s, 0.15, 0.85), y = clamp(0.5 - pts[base + i * 3 + 1] * s, 0.15, 0.85);
    const z = clamp(-pts[base + i * 3 + 2] * s, -0.35, 0.35);
    line += `${i ? ',' : ''}[${num(x)},${num(y)},${num(z)},${num(conf[i])}]`;
  }
  line += '],"angles":[';
  for (let k = 0; k < 9; ++k) line += (k ? ',' : '') + num(angles[f * 9 + k]);
  buf += line + ']}\n';
  if (buf.length >= 1 << 20) { fs.writeSync(fd, buf); buf = ''; }
}
fs.writeSync(fd, buf);
fs.closeSync(fd);
console.error(`three.js: ${frames} frames at ${fps} fps, ${bones.length} bones, ${mapped.filter((j) => j >= 0).length} points mapped`);
