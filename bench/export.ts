// npm run bench -- export [--json] [--threads T] [--batches 1,64] [--seconds S] [--points L]
// Inference speed of exported models: tailor's no-grad forward pass next to ONNX Runtime's CPU
// execution of the model `tailor export` writes, same inputs, same thread count, in one process.
// Long-tail: the shipped Fashion-MNIST-LT SADE and PRL systems (3-expert ResNet-32, 28x28 grey;
// untrained weights, as speed does not depend on them), images/s. NMR: the default U-Net,
// spectra/s. The parity of the outputs is checked on the way (max |difference| printed).
import './lib/user-errors.js';
import { count, number, counts } from './lib/options.js';
import { parseArgs } from 'node:util';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import * as torch from '../src/torch/index.js';
import { buildSession, loadConfig, runToOnnx, type Session } from '../src/longtail/index.js';
import { UNet1d, unetModelToOnnx } from '../src/nmr/index.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    threads: { type: 'string', default: '2' },
    batches: { type: 'string', default: '1,64' },
    seconds: { type: 'string', default: '3' },
    points: { type: 'string', default: '4096' },
  },
});
const threads = count('threads', values.threads);
const batches = counts('batches', values.batches);
const seconds = number('seconds', values.seconds, { positive: true });
const points = count('points', values.points);
const root = new URL('../../', import.meta.url).pathname;
torch.setNumThreads(threads);

/** Calls per second of `fn` over about `seconds` seconds after two warm-up calls. */
async function rate(fn: () => unknown): Promise<number> {
  await fn();
  await fn();
  let calls = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    await fn();
    calls++;
  }
  return (calls * 1000) / (performance.now() - start);
}

interface Row {
  model: string;
  batch: number;
  tailor: number;
  onnxruntime: number;
  maxDiff: number;
}

async function compare(
  model: string,
  bytes: Uint8Array,
  shape: (batch: number) => number[],
  inputName: string,
  forward: (x: torch.Tensor) => torch.Tensor,
): Promise<Row[]> {
  const inputs = batches.map((batch) => {
    const dims = shape(batch);
    torch.manualSeed(batch);
    return { batch, dims, data: torch.tidy(() => torch.rand(dims).toFloat32Array()) };
  });
  // tailor first and ONNX Runtime after, each alone: the two engines' thread pools would
  // otherwise compete for the same cores.
  const ours = inputs.map(({ dims, data }) => {
    const x = torch.tensor(data, { shape: dims });
    const run = () => torch.noGrad(() => torch.tidy(() => forward(x).toFloat32Array()));
    return { x, run, out: run() };
  });
  const tailorRates: number[] = [];
  for (const o of ours) tailorRates.push(await rate(o.run));
  const session = await ort.InferenceSession.create(bytes, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    // No spin-waiting between calls, as libtorch's pool does not either.
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  const output = session.outputNames[0]!;
  const rows: Row[] = [];
  for (const [k, { batch, dims, data }] of inputs.entries()) {
    const feeds = { [inputName]: new ort.Tensor('float32', data, dims) };
    const theirs = async () => (await session.run(feeds))[output]!.data as Float32Array;
    const b = await theirs();
    const a = ours[k]!.out;
    const maxDiff = a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i]!)), 0);
    rows.push({
      model,
      batch,
      tailor: tailorRates[k]! * batch,
      onnxruntime: (await rate(theirs)) * batch,
      maxDiff,
    });
    ours[k]!.x.dispose();
  }
  await session.release();
  return rows;
}

function longtail(name: string): Session {
  const file = join(root, 'configs', `fmnist_lt_ir100_${name}.json`);
  torch.manualSeed(0);
  return buildSession(loadConfig(file), file, { trainMaxPerClass: 12, testPerClass: 4 });
}

const rows: Row[] = [];
for (const name of ['sade', 'prl']) {
  const session = longtail(name);
  const exported = runToOnnx({ session, checkpoint: '(untrained)', runDir: '' }, { version: 'bench' });
  const { mean, std } = exported.metadata.normalization as { mean: number[]; std: number[] };
  const c = exported.inputShape[0];
  const m = torch.keep(torch.tensor(mean, { shape: [1, c, 1, 1] }));
  const s = torch.keep(torch.tensor(std, { shape: [1, c, 1, 1] }));
  // tailor's side includes the normalization, as the graph does.
  const forward = (x: torch.Tensor) => exported.system.evalForward(x.sub(m).div(s)).output;
  rows.push(
    ...(await compare(
      `${name} ResNet-32 x3`,
      exported.bytes,
      (b) => [b, ...exported.inputShape],
      'image',
      forward,
    )),
  );
  for (const mod of Object.values(session.system.modules)) mod.dispose();
}
const unet = new UNet1d().eval();
// The head starts at zero (the untrained network is the identity): draw it, so that the outputs
// compared carry the whole network.
torch.noGrad(() => torch.aten.normal_(unet.head.weight, 0, 0.1));
const { bytes } = unetModelToOnnx(unet, 'bench');
const unetBatches = batches.map((b) => Math.min(b, 8));
batches.splice(0, batches.length, ...new Set(unetBatches));
rows.push(
  ...(await compare(
    `U-Net default, ${points} points`,
    bytes,
    (b) => [b, 1, points],
    'spectra',
    (x) => unet.forward(x),
  )),
);

if (values.json) {
  console.log(JSON.stringify({ threads, rows }));
} else {
  console.log(`threads ${threads}; per second (images, or spectra for the U-Net)`);
  console.log('| model | batch | tailor /s | ONNX Runtime /s | ORT / tailor | max abs diff |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.model} | ${r.batch} | ${r.tailor.toFixed(1)} | ${r.onnxruntime.toFixed(1)} | ${(r.onnxruntime / r.tailor).toFixed(2)} | ${r.maxDiff.toExponential(1)} |`,
    );
}
