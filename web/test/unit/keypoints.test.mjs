// Binary keypoint frames (docs/contracts/websocket-keypoints.md §2.2) and
// the NDJSON angle reader (web/src/keypoints.js).
import assert from "node:assert/strict";
import { test } from "node:test";
import { EDGES, FRAME_BYTES, confidenceClass, decodeFrame, readAngles } from "../../src/keypoints.js";

test("decodes a frame built byte by byte from the contract", () => {
  const buf = new ArrayBuffer(572);
  const v = new DataView(buf);
  v.setUint32(0, 41, true);
  v.setFloat32(4, 1366.6666, true);
  for (let i = 0; i < 33; i++)
    for (let k = 0; k < 4; k++) v.setFloat32(8 + i * 16 + k * 4, i + k / 8, true);
  for (let a = 0; a < 9; a++) v.setFloat32(536 + a * 4, -1 + a / 4, true);
  const f = decodeFrame(buf);
  assert.equal(FRAME_BYTES, 572);
  assert.equal(f.frame, 41);
  assert.equal(f.timeMs, Math.fround(1366.6666));
  assert.equal(f.points.length, 33);
  assert.deepEqual(f.points[32], [32, 32.125, 32.25, 32.375]);
  assert.deepEqual(f.angles, [-1, -0.75, -0.5, -0.25, 0, 0.25, 0.5, 0.75, 1]);
  assert.throws(() => decodeFrame(new ArrayBuffer(571)), /571 bytes/);
});

test("the 35 edges join valid, distinct points", () => {
  assert.equal(EDGES.length, 35);
  const seen = new Set();
  for (const [a, b] of EDGES) {
    assert.ok(a >= 0 && a < 33 && b >= 0 && b < 33 && a !== b);
    const key = `${Math.min(a, b)}-${Math.max(a, b)}`;
    assert.ok(!seen.has(key), key);
    seen.add(key);
  }
});

test("confidence classes", () => {
  assert.equal(confidenceClass(1), "measured");
  assert.equal(confidenceClass(0.5), "estimated");
  assert.equal(confidenceClass(0), "missing");
});

test("readAngles keeps every k-th line across chunk boundaries", async () => {
  const lines = [];
  for (let i = 0; i < 10; i++) lines.push(JSON.stringify({ frame: i, timeMs: i * 10, points: [], angles: [i / 10] }));
  const text = lines.join("\n") + "\n";
  const bytes = new TextEncoder().encode(text);
  const body = new ReadableStream({
    start(c) {
      for (let o = 0; o < bytes.length; o += 7) c.enqueue(bytes.slice(o, o + 7));
      c.close();
    },
  });
  const all = await readAngles(new Response(body), 10, 100);
  assert.deepEqual(all.map((f) => f.frame), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const some = await readAngles(new Response(text.trimEnd()), 10, 4);
  assert.deepEqual(some.map((f) => f.frame), [0, 3, 6, 9]);
  assert.deepEqual(some[1].angles, [0.3]);
});
