// Single-pose inference of the benchmark MLP (exported by mlp_torch.py) in
// onnxruntime-node, one intra-op and one inter-op thread, sequential mode:
// the peer of charkit's BM_MlpInferOnePose / BM_OnnxInferOnePose.
// Usage: node mlp_ort.mjs MODEL.onnx [REPEATS]
// Prints the median over REPEATS rounds of the mean time per pose, in µs,
// and checks one output row against PyTorch's (MODEL.onnx.out.npy).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const ort = require('onnxruntime-node');

function readNpyF32(path) {
  const b = readFileSync(path);
  const hl = b.readUInt16LE(8);
  const header = b.subarray(10, 10 + hl).toString('latin1');
  const shape = header.match(/\(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + 10 + hl, b.byteOffset + b.length));
  return { shape, data };
}

const [model, repeatsArg] = process.argv.slice(2);
const repeats = Number(repeatsArg || 3);
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});
const probe = readNpyF32(model + '.in.npy');
const want = readNpyF32(model + '.out.npy');
const features = probe.shape[1];
const x = new ort.Tensor('float32', probe.data.slice(0, features), [1, features]);
let res = await session.run({ x });
let maxDiff = 0;
for (let i = 0; i < res.y.data.length; ++i)
  maxDiff = Math.max(maxDiff, Math.abs(res.y.data[i] - want.data[i]));

const perRound = 20000;
const rounds = [];
for (let r = 0; r < repeats; ++r) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < perRound; ++i) res = await session.run({ x });
  const t1 = process.hrtime.bigint();
  rounds.push(Number(t1 - t0) / 1e3 / perRound);
}
rounds.sort((a, b) => a - b);
const median = rounds[Math.floor(rounds.length / 2)];
console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''}: ${median.toFixed(2)} us per pose ` +
            `(median of ${repeats} rounds of ${perRound}; max |diff| vs PyTorch ${maxDiff.toExponential(2)})`);
