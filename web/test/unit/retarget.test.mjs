// The MediaPipe-33 → VRM normalized humanoid solver (web/src/retarget.js)
// on hand-made poses.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Quaternion, Vector3 } from "three";
import { LIMBS, REQUIRED_HUMANOID_BONES, defaultAvatar, solvePose } from "../../src/retarget.js";

const S = 0.35;  // any scale: the solver uses directions only

/** A T-posed subject facing +Z (its left on +X), in the keypoint world frame (metres). */
function tPose() {
  const w = Array.from({ length: 33 }, () => new Vector3(0, 1.5, 0.1));
  const set = (i, x, y, z = 0) => w[i].set(x, y, z);
  set(23, 0.1, 0); set(24, -0.1, 0);              // hips
  set(11, 0.2, 0.5); set(12, -0.2, 0.5);          // shoulders
  set(13, 0.45, 0.5); set(14, -0.45, 0.5);        // elbows
  set(15, 0.7, 0.5); set(16, -0.7, 0.5);          // wrists
  set(17, 0.8, 0.5, -0.03); set(19, 0.8, 0.5, 0.03);    // left pinky, index
  set(18, -0.8, 0.5, -0.03); set(20, -0.8, 0.5, 0.03);  // right pinky, index
  set(25, 0.1, -0.45); set(26, -0.1, -0.45);      // knees
  set(27, 0.1, -0.9); set(28, -0.1, -0.9);        // ankles
  set(31, 0.1, -0.9, 0.15); set(32, -0.1, -0.9, 0.15);  // foot index
  set(7, 0.07, 0.7); set(8, -0.07, 0.7);          // ears
  return w;
}

/** World points → a frame's points ([x, y, z, c], docs/contracts/keypoints.md §2.1). */
function toPoints(world) {
  return world.map((v) => [0.5 + v.x * S, 0.5 - v.y * S, -v.z * S, 1]);
}

/** A synthetic VRM 1.0-like rig: arms along ±X, legs down, feet forward, neck up. */
const rig1 = {
  flip: false,
  hipsLeft: new Vector3(1, 0, 0),
  shouldersLeft: new Vector3(1, 0, 0),
  rest: {
    leftUpperArm: new Vector3(1, 0, 0), leftLowerArm: new Vector3(1, 0, 0), leftHand: new Vector3(1, 0, 0),
    rightUpperArm: new Vector3(-1, 0, 0), rightLowerArm: new Vector3(-1, 0, 0), rightHand: new Vector3(-1, 0, 0),
    leftUpperLeg: new Vector3(0, -1, 0), leftLowerLeg: new Vector3(0, -1, 0), leftFoot: new Vector3(0, 0, 1),
    rightUpperLeg: new Vector3(0, -1, 0), rightLowerLeg: new Vector3(0, -1, 0), rightFoot: new Vector3(0, 0, 1),
    neck: new Vector3(0, 1, 0),
  },
};
/** The same rig as a VRM 0.x model facing −Z stores it (x and z negated). */
const rig0 = {
  flip: true,
  hipsLeft: new Vector3(-1, 0, 0),
  shouldersLeft: new Vector3(-1, 0, 0),
  rest: Object.fromEntries(Object.entries(rig1.rest).map(([k, v]) => [k, new Vector3(-v.x, v.y, -v.z)])),
};

const degrees = (q) => (new Quaternion().angleTo(q) * 180) / Math.PI;

for (const [name, rig] of [["VRM 1.0", rig1], ["VRM 0.x", rig0]]) {
  test(`${name}: T-pose keypoints give the rest pose`, () => {
    const { local } = solvePose(toPoints(tPose()), rig);
    for (const bone of ["hips", "spine", "neck", ...LIMBS.map((l) => l[0])])
      assert.ok(degrees(local[bone]) < 0.01, `${bone}: ${degrees(local[bone])}°`);
  });

  test(`${name}: the left arm raised 90° turns the upper arm by 90°`, () => {
    const w = tPose();
    // Shoulder at (0.2, 0.5): elbow and wrist straight up from it.
    w[13].set(0.2, 0.75, 0); w[15].set(0.2, 1.0, 0); w[17].set(0.2, 1.1, -0.03); w[19].set(0.2, 1.1, 0.03);
    const { local } = solvePose(toPoints(w), rig);
    assert.ok(Math.abs(degrees(local.leftUpperArm) - 90) < 2, `${degrees(local.leftUpperArm)}°`);
    assert.ok(degrees(local.leftLowerArm) < 0.5, "the forearm stays straight relative to the upper arm");
    assert.ok(degrees(local.rightUpperArm) < 0.01);
    // The rotation carries the rest direction onto the keypoint direction (up).
    const dir = rig.rest.leftUpperArm.clone().applyQuaternion(local.leftUpperArm);
    assert.ok(dir.distanceTo(new Vector3(0, 1, 0)) < 1e-6, dir.toArray().join(","));
  });

  test(`${name}: a knee bent 90° forward, a torso turned 30°`, () => {
    const w = tPose();
    w[25].set(0.1, 0, 0.45); w[27].set(0.1, -0.45, 0.45); w[31].set(0.1, -0.45, 0.6);  // left thigh forward
    const turn = new Quaternion().setFromAxisAngle(new Vector3(0, 1, 0), Math.PI / 6);
    for (const i of [11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 7, 8]) w[i].applyQuaternion(turn);
    const { local, world } = solvePose(toPoints(w), rig);
    assert.ok(Math.abs(degrees(local.leftUpperLeg) - 90) < 0.5, `${degrees(local.leftUpperLeg)}°`);
    assert.ok(Math.abs(degrees(local.leftLowerLeg) - 90) < 0.5, `${degrees(local.leftLowerLeg)}°`);
    assert.ok(Math.abs(degrees(local.spine) - 30) < 0.5, `${degrees(local.spine)}°`);
    assert.ok(degrees(local.hips) < 0.01);
    // The arms ride on the turned torso: relative to it they are still at rest.
    assert.ok(degrees(local.leftUpperArm) < 0.5 && degrees(local.rightUpperArm) < 0.5);
    // World directions of every limb match the keypoints.
    const p = toPoints(w);
    const kp = (i) => new Vector3(p[i][0] - 0.5, 0.5 - p[i][1], -p[i][2]);
    const flip = (v) => (rig.flip ? v.set(-v.x, v.y, -v.z) : v);
    const shin = flip(kp(27).sub(kp(25))).normalize();
    assert.ok(rig.rest.leftLowerLeg.clone().applyQuaternion(world.leftLowerLeg).distanceTo(shin) < 1e-5);
  });
}

test("the default avatar has a body: a skin and the required humanoid bones", () => {
  const eyes = { id: 1, vrmVersion: "0.0", skinned: false, humanoidBones: 0 };
  const unrigged = { id: 2, vrmVersion: "1.0", skinned: true, humanoidBones: 3 };
  const body = { id: 3, vrmVersion: "1.0", skinned: true, humanoidBones: 54 };
  const glb = { id: 4, vrmVersion: null, skinned: true, humanoidBones: 0 };
  assert.equal(defaultAvatar([eyes, unrigged, body, glb]), 3);
  assert.equal(defaultAvatar([glb, eyes, unrigged]), 1);  // no body: the first VRM still
  assert.equal(defaultAvatar([glb]), null);
  assert.equal(defaultAvatar([]), null);
  const justEnough = { ...unrigged, id: 5, humanoidBones: REQUIRED_HUMANOID_BONES };
  assert.equal(defaultAvatar([eyes, justEnough, body]), 5);
});
