// Retargeting MediaPipe-33 keypoints onto a VRM's normalized humanoid
// bones (docs/console.md §Retargeting): a direction-based solver written
// for charkit. Every normalized bone has the identity as its rest
// rotation, so a bone's rest direction is the offset of its child in the
// model's frame, and a pose is a local rotation per bone:
//   hips:  the pelvis frame (left = right hip → left hip, up = hips → shoulders)
//   spine: the shoulder frame (left = right → left shoulder, up = hips → shoulders), relative to the hips
//   limbs: the swing from the bone's rest direction to the keypoint
//          direction, both in the parent bone's space
//   neck:  the swing from its rest direction to shoulders → ears
// Pure (three.js maths only): unit-tested in web/test/unit/retarget.test.mjs.
import { Matrix4, Quaternion, Vector3 } from "three";

/** Keypoint indices (docs/contracts/skeleton-topology.md §1). */
const P = {
  leftEar: 7, rightEar: 8, leftShoulder: 11, rightShoulder: 12, leftElbow: 13, rightElbow: 14,
  leftWrist: 15, rightWrist: 16, leftPinky: 17, rightPinky: 18, leftIndex: 19, rightIndex: 20,
  leftHip: 23, rightHip: 24, leftKnee: 25, rightKnee: 26, leftAnkle: 27, rightAnkle: 28,
  leftFootIndex: 31, rightFootIndex: 32,
};

/**
 * The limbs the solver drives: bone, its parent bone (whose solved world
 * rotation it is relative to), the child bone whose rest offset gives the
 * rest direction, and the keypoints [from, to] (arrays: their midpoint).
 */
export const LIMBS = [
  ["leftUpperArm", "spine", "leftLowerArm", P.leftShoulder, P.leftElbow],
  ["leftLowerArm", "leftUpperArm", "leftHand", P.leftElbow, P.leftWrist],
  ["leftHand", "leftLowerArm", "leftMiddleProximal", P.leftWrist, [P.leftIndex, P.leftPinky]],
  ["rightUpperArm", "spine", "rightLowerArm", P.rightShoulder, P.rightElbow],
  ["rightLowerArm", "rightUpperArm", "rightHand", P.rightElbow, P.rightWrist],
  ["rightHand", "rightLowerArm", "rightMiddleProximal", P.rightWrist, [P.rightIndex, P.rightPinky]],
  ["leftUpperLeg", "hips", "leftLowerLeg", P.leftHip, P.leftKnee],
  ["leftLowerLeg", "leftUpperLeg", "leftFoot", P.leftKnee, P.leftAnkle],
  ["leftFoot", "leftLowerLeg", "leftToes", P.leftAnkle, P.leftFootIndex],
  ["rightUpperLeg", "hips", "rightLowerLeg", P.rightHip, P.rightKnee],
  ["rightLowerLeg", "rightUpperLeg", "rightFoot", P.rightKnee, P.rightAnkle],
  ["rightFoot", "rightLowerLeg", "rightToes", P.rightAnkle, P.rightFootIndex],
];

/**
 * Keypoint i of a frame in the keypoint world frame (Y up, right-handed),
 * up to the motion's scale: the inverse of docs/contracts/keypoints.md §2.1
 * (x = 0.5 + X·s, y = 0.5 − Y·s, z = −Z·s).
 */
export function worldPoint(points, i, out = new Vector3()) {
  const p = points[i];
  return out.set(p[0] - 0.5, 0.5 - p[1], -p[2]);
}

function at(points, spec, out) {
  if (!Array.isArray(spec)) return worldPoint(points, spec, out);
  worldPoint(points, spec[0], out);
  return out.add(worldPoint(points, spec[1], new Vector3())).multiplyScalar(0.5);
}

/** The rotation whose columns are the frame (left, up, forward) from a left and an up direction. */
export function frameRotation(left, up, out = new Quaternion()) {
  const x = left.clone().normalize();
  const y = up.clone().addScaledVector(x, -up.dot(x)).normalize();
  const z = new Vector3().crossVectors(x, y);
  return out.setFromRotationMatrix(new Matrix4().makeBasis(x, y, z));
}

/**
 * A rig description from a three-vrm VRM: for each driven bone, its rest
 * direction in the model's frame (the child's rest offset; every normalized
 * bone's rest rotation is the identity); the rest pelvis and shoulder lines
 * (right → left: +X in a VRM 1.0, which faces +Z; −X in a VRM 0.x, which
 * faces −Z); `flip` for VRM 0.x: keypoint directions are turned 180° about
 * Y (x and z negated) into its frame.
 */
export function rigOf(vrm) {
  const node = (name) => vrm.humanoid.getNormalizedBoneNode(name);
  const rest = {};
  for (const [bone, , child] of LIMBS) {
    const c = node(child);
    if (node(bone) && c && c.position.lengthSq() > 0) rest[bone] = c.position.clone().normalize();
  }
  const head = node("head");
  if (node("neck") && head && head.position.lengthSq() > 0) rest.neck = head.position.clone().normalize();
  const offset = (name) => {
    const out = new Vector3();
    for (let n = node(name); n && n !== vrm.humanoid.normalizedHumanBonesRoot; n = n.parent) out.add(n.position);
    return out;
  };
  const flip = vrm.meta?.metaVersion === "0";
  const fallback = new Vector3(flip ? -1 : 1, 0, 0);
  const line = (l, r) => (node(l) && node(r) ? offset(l).sub(offset(r)) : fallback.clone());
  return { rest, flip, hipsLeft: line("leftUpperLeg", "rightUpperLeg"),
    shouldersLeft: line("leftUpperArm", "rightUpperArm") };
}

/**
 * Humanoid bones a VRM must map for the solver to drive a body: the 15 that
 * VRM 1.0 requires (hips, spine, head, and upper/lower arm, hand, upper/lower
 * leg and foot on each side).
 */
export const REQUIRED_HUMANOID_BONES = 15;

/**
 * The avatar a motion page starts with when none is asked for: the first
 * VRM (of `models`, records as /api/models gives them) with a skin and at
 * least the required humanoid bones — not a VRM without a body, such as one
 * made of two eye meshes — else the first VRM; null when there is none.
 */
export function defaultAvatar(models) {
  const vrms = models.filter((m) => m.vrmVersion);
  const body = vrms.find((m) => m.skinned && (m.humanoidBones ?? 0) >= REQUIRED_HUMANOID_BONES);
  return (body ?? vrms[0])?.id ?? null;
}

/**
 * Solves one frame: {bone: Quaternion} local rotations of the normalized
 * bones (hips, spine, the LIMBS, neck), and `world` (their world rotations
 * in the model's frame). `rig` is rigOf()'s, or {rest, flip} for tests.
 */
export function solvePose(points, rig) {
  const to = (v) => (rig.flip ? v.set(-v.x, v.y, -v.z) : v);
  const pt = (spec) => to(at(points, spec, new Vector3()));
  const hipL = pt(P.leftHip);
  const hipR = pt(P.rightHip);
  const shL = pt(P.leftShoulder);
  const shR = pt(P.rightShoulder);
  const hipMid = hipL.clone().add(hipR).multiplyScalar(0.5);
  const shMid = shL.clone().add(shR).multiplyScalar(0.5);
  const up = shMid.clone().sub(hipMid);
  const Y = new Vector3(0, 1, 0);
  // A torso bone's world rotation takes its rest frame (rest line, +Y) to the keypoints' frame.
  const torso = (line, restLine) =>
    frameRotation(line, up).multiply(frameRotation(restLine ?? new Vector3(1, 0, 0), Y).invert());
  const world = {};
  const local = {};
  world.hips = torso(hipL.clone().sub(hipR), rig.hipsLeft);
  local.hips = world.hips.clone();
  world.spine = torso(shL.clone().sub(shR), rig.shouldersLeft);
  local.spine = world.hips.clone().invert().multiply(world.spine);
  const swing = (bone, parent, dir) => {
    const rest = rig.rest[bone];
    if (!rest || dir.lengthSq() === 0) {
      local[bone] = new Quaternion();
    } else {
      const inParent = dir.clone().normalize().applyQuaternion(world[parent].clone().invert());
      local[bone] = new Quaternion().setFromUnitVectors(rest, inParent);
    }
    world[bone] = world[parent].clone().multiply(local[bone]);
  };
  for (const [bone, parent, , from, toSpec] of LIMBS) swing(bone, parent, pt(toSpec).sub(pt(from)));
  if (rig.rest.neck) {
    const ears = pt(P.leftEar).add(pt(P.rightEar)).multiplyScalar(0.5);
    swing("neck", "spine", ears.sub(shMid));
  }
  return { local, world };
}

/** The angle between two rotations, degrees. */
export function angleBetween(a, b) {
  return (a.angleTo(b) * 180) / Math.PI;
}
