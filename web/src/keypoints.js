// MediaPipe-33 keypoint frames as the server streams them
// (docs/contracts/websocket-keypoints.md §2.2) and the skeleton's edges.

export const FRAME_BYTES = 572;
export const ANGLE_NAMES = ["shoulder_L", "shoulder_R", "elbow_L", "elbow_R", "hip_L", "hip_R",
  "knee_L", "knee_R", "spine"];

/** The 35 connections of MediaPipe Pose's 33 points (face, arms, hands, torso, legs, feet). */
export const EDGES = [
  [0, 1], [1, 2], [2, 3], [3, 7], [0, 4], [4, 5], [5, 6], [6, 8], [9, 10],
  [11, 12], [11, 13], [13, 15], [15, 17], [15, 19], [15, 21], [17, 19],
  [12, 14], [14, 16], [16, 18], [16, 20], [16, 22], [18, 20],
  [11, 23], [12, 24], [23, 24], [23, 25], [24, 26], [25, 27], [26, 28],
  [27, 29], [28, 30], [29, 31], [30, 32], [27, 31], [28, 32],
];

/**
 * Decodes one binary frame: {frame, timeMs, points: [[x, y, z, c] ×33], angles: [9]}.
 * Throws on a message of the wrong size.
 */
export function decodeFrame(buffer) {
  if (buffer.byteLength !== FRAME_BYTES) throw new Error(`frame of ${buffer.byteLength} bytes, not ${FRAME_BYTES}`);
  const v = new DataView(buffer);
  const points = [];
  for (let i = 0; i < 33; i++) {
    const o = 8 + i * 16;
    points.push([v.getFloat32(o, true), v.getFloat32(o + 4, true), v.getFloat32(o + 8, true),
      v.getFloat32(o + 12, true)]);
  }
  const angles = [];
  for (let i = 0; i < 9; i++) angles.push(v.getFloat32(536 + i * 4, true));
  return { frame: v.getUint32(0, true), timeMs: v.getFloat32(4, true), points, angles };
}

/** The colour of a point by confidence: measured (≥ 0.9), estimated (> 0), missing (0). */
export function confidenceClass(c) {
  if (c >= 0.9) return "measured";
  if (c > 0) return "estimated";
  return "missing";
}

/**
 * Reads a keypoints NDJSON response body, keeping about `maxFrames` frames
 * evenly spaced (every k-th line). Resolves to [{frame, timeMs, angles}].
 */
export async function readAngles(response, totalFrames, maxFrames = 1500) {
  const step = Math.max(1, Math.ceil((totalFrames || 1) / maxFrames));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const out = [];
  let rest = "";
  let line = 0;
  const take = (text) => {
    if (text && line % step === 0) {
      const f = JSON.parse(text);
      out.push({ frame: f.frame, timeMs: f.timeMs, angles: f.angles });
    }
    if (text) line++;
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = rest.indexOf("\n")) >= 0) {
      take(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
    }
  }
  take(rest + decoder.decode());
  return out;
}
