// Batched inference of the benchmark MLP (bench/peer/mlp_onnx_batch.py) in
// onnxruntime-node: one intra-op and one inter-op thread, sequential mode,
// the batch given as one [B, 300] tensor per run — the peer of charkit's
// BM_MlpInferBatch / BM_OnnxInferBatch at the same B.
// Usage: node mlp_ort_batch.mjs MODEL.onnx BATCH [REPEATS]
// Prints the median over REPEATS rounds of the time per pose, in µs.
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

const [model, batchArg, repeatsArg] = process.argv.slice(2);
const batch = Number(batchArg);
const repeats = Number(repeatsArg || 5);
const session = await ort.InferenceSession.create(model, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  graphOptimizationLevel: 'all',
});
const input = readNpyF32(model + '.in.npy');
const [rows, features] = input.shape;
if (batch > rows) throw new Error(`batch ${batch} > the ${rows} rows of ${model}.in.npy`);
const x = new ort.Tensor('float32', input.data.slice(0, batch * features), [batch, features]);
let res = await session.run({ x });
if (res.y.dims[0] !== batch) throw new Error('unexpected output shape ' + res.y.dims);

// About 0.5 s of work per round.
const t0 = process.hrtime.bigint();
res = await session.run({ x });
const once = Number(process.hrtime.bigint() - t0) / 1e9;
const perRound = Math.max(3, Math.round(0.5 / Math.max(once, 1e-6)));
const rounds = [];
for (let r = 0; r < repeats; ++r) {
  const a = process.hrtime.bigint();
  for (let i = 0; i < perRound; ++i) res = await session.run({ x });
  const b = process.hrtime.bigint();
  rounds.push(Number(b - a) / 1e3 / (perRound * batch));
}
rounds.sort((a, b) => a - b);
const median = rounds[Math.floor(rounds.length / 2)];
console.log(`onnxruntime-node ${ort.env.versions?.common ?? ''} batch ${batch}: ` +
            `${median.toFixed(3)} us per pose (median of ${repeats} rounds of ${perRound} runs)`);
