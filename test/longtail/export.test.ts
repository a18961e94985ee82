// ONNX export of long-tail runs: each shipped Fashion-MNIST-LT system (CE, SADE, BalPoE,
// LDAM-DRW, PRL at two preferences), trained for one tiny epoch so that batch norm has real
// running statistics, exported and run by ONNX Runtime on 64 images; its logits must match
// tailor's own evaluation-mode output within 1e-4. Then what the file says about itself, the
// expert weights and prior bias of a test-time file, and the named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import * as torch from '../../src/torch/index.js';
import { nn, onnx } from '../../src/torch/index.js';
import {
  ExpertWeightsError,
  PreferenceError,
  TestTimeFileError,
  buildSession,
  loadConfig,
  runToOnnx,
  systemToOnnx,
  trainSession,
  type LoadedRun,
  type OnnxExport,
} from '../../src/longtail/index.js';
import { repoRoot, runTailor } from '../helpers.js';
import { ResNetImageNet } from '../../src/longtail/models/resnet-imagenet.js';
import { plainSystem } from '../../src/longtail/systems/system.js';
import type { Loss } from '../../src/longtail/losses/types.js';

const fmnist = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const skip = !fmnist && 'Fashion-MNIST not installed';
const N = 64;
// One thread: libtorch's OpenMP pool slows down many times over when the cores are shared.
torch.setNumThreads(1);
const TOLERANCE = 1e-4;

async function trainedRun(name: string, dir: string): Promise<LoadedRun> {
  const file = join(repoRoot, 'configs', `fmnist_lt_ir100_${name}.json`);
  torch.manualSeed(0);
  const session = buildSession(loadConfig(file), file, {
    // LDAM's margins need an image of every class: 100 head images leave the tail one.
    trainMaxPerClass: name === 'ldam_drw' ? 100 : 12,
    testPerClass: 4,
  });
  const runDir = join(dir, name);
  await trainSession(session, { epochs: 1, seed: 0, runDir, quiet: true, log: () => {} });
  return { session, checkpoint: join(runDir, 'checkpoint-last.json'), runDir };
}

/** 64 seeded images in [0, 1]. */
function images(inputShape: readonly number[]): { data: Float32Array; shape: number[] } {
  const shape = [N, ...inputShape];
  torch.manualSeed(1);
  const data = torch.tidy(() => torch.rand(shape).toFloat32Array());
  return { data, shape };
}

/** tailor's logits: the evaluation-mode forward pass on the normalized images, weighted as asked. */
function tailorLogits(exported: OnnxExport, x: { data: Float32Array; shape: number[] }): Float32Array {
  const norm = exported.metadata.normalization as { mean: number[]; std: number[] };
  const c = x.shape[1]!;
  return torch.noGrad(() =>
    torch.tidy(() => {
      const t = torch.tensor(x.data, { shape: x.shape });
      const mean = torch.tensor(norm.mean, { shape: [1, c, 1, 1] });
      const std = torch.tensor(norm.std, { shape: [1, c, 1, 1] });
      const out = exported.system.evalForward(t.sub(mean).div(std));
      const w = exported.combination.weights;
      let logits = w ? out.logits.mul(torch.tensor([...w]).reshape(-1, 1, 1)).sum(0) : out.output;
      if (exported.combination.bias) logits = logits.add(torch.tensor([...exported.combination.bias]));
      return logits.toFloat32Array();
    }),
  );
}

async function onnxOutputs(bytes: Uint8Array, x: { data: Float32Array; shape: number[] }) {
  const session = await ort.InferenceSession.create(bytes);
  const out = await session.run({ image: new ort.Tensor('float32', x.data, x.shape) });
  return { logits: out.logits!.data as Float32Array, probabilities: out.probabilities!.data as Float32Array };
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  assert.equal(a.length, b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

/** Exports, runs both, checks logits and probabilities; returns the largest logit difference. */
async function checkParity(exported: OnnxExport, label: string): Promise<number> {
  const x = images(exported.inputShape);
  const ours = tailorLogits(exported, x);
  const theirs = await onnxOutputs(exported.bytes, x);
  const diff = maxAbsDiff(ours, theirs.logits);
  assert.ok(diff <= TOLERANCE, `${label}: ONNX logits differ from tailor's by ${diff}`);
  const classes = ours.length / N;
  for (let i = 0; i < N; i++) {
    const p = theirs.probabilities.subarray(i * classes, (i + 1) * classes);
    assert.ok(Math.abs(p.reduce((s, v) => s + v, 0) - 1) < 1e-5, `${label}: probabilities of row ${i}`);
  }
  console.log(`${label}: max |logit difference| ${diff.toExponential(2)} over ${N} images`);
  return diff;
}

const version = '0.0.0-test';

test('ONNX export: parity with tailor for every long-tail system', { skip }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-export-'));
  try {
    for (const name of ['ce', 'sade', 'balpoe', 'ldam_drw', 'prl']) {
      const run = await trainedRun(name, dir);
      if (name === 'prl') {
        for (const r of [
          [0.7, 0.2, 0.1],
          [0.1, 0.3, 0.6],
        ]) {
          const exported = runToOnnx(run, { version, preference: r });
          assert.deepEqual(exported.metadata.combination, { weights: r, preference: r });
          await t.test(`prl at ${r.join('/')}`, async () => {
            await checkParity(exported, `prl at ${r.join('/')}`);
          });
        }
        await t.test('named errors', () => badInputs(run, dir));
        await t.test('a test-time preference', async () => {
          const file = join(dir, 'prl.summary.json');
          writeFileSync(file, JSON.stringify({ chosen: { preference: [0.2, 0.3, 0.5] } }));
          const exported = runToOnnx(run, { version, testTime: file });
          assert.deepEqual(exported.metadata.combination, {
            weights: [0.2, 0.3, 0.5],
            preference: [0.2, 0.3, 0.5],
            test_time_file: 'prl.summary.json',
          });
          await checkParity(exported, 'prl at the test-time preference 0.2/0.3/0.5');
          assert.throws(
            () => runToOnnx(run, { version, testTime: file, preference: [1, 1, 1] }),
            TestTimeFileError,
          );
        });
      } else {
        await t.test(name, async () => {
          await checkParity(runToOnnx(run, { version }), name);
        });
      }
      if (name === 'sade') await t.test('test-time file', () => testTimeFile(run, dir));
      if (name === 'ce') await t.test('metadata', () => metadata(runToOnnx(run, { version }), run));
      for (const m of Object.values(run.session.system.modules)) m.dispose();
    }
    await t.test('tailor export', () => cli(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function metadata(exported: OnnxExport, run: LoadedRun): void {
  const m = exported.metadata;
  assert.equal(m.tailor_version, version);
  assert.match(String(m.config_hash), /^sha256:[0-9a-f]{64}$/);
  assert.equal((m.class_names as string[]).length, 10);
  const prior = m.training_prior as number[];
  assert.ok(Math.abs(prior.reduce((s, v) => s + v, 0) - 1) < 1e-9);
  assert.ok(prior[0]! > prior[9]!, 'the training prior is long-tailed');
  assert.deepEqual((m.normalization as { mean: number[] }).mean, [0.286]);
  // The same config hashes the same.
  assert.equal(runToOnnx(run, { version }).metadata.config_hash, m.config_hash);
}

async function testTimeFile(run: LoadedRun, dir: string): Promise<void> {
  const file = join(dir, 'predict.summary.json');
  const prior = [0.05, 0.05, 0.05, 0.05, 0.1, 0.1, 0.1, 0.1, 0.2, 0.2];
  writeFileSync(
    file,
    JSON.stringify({ kind: 'predictions', chosen: { weights: [0.5, 0.2, 0.3] }, estimated_prior: prior }),
  );
  const weighted = runToOnnx(run, { version, testTime: file });
  assert.deepEqual(weighted.combination.weights, [0.5, 0.2, 0.3]);
  await checkParity(weighted, 'sade with test-time weights');
  const biased = runToOnnx(run, { version, testTime: file, priorBias: true });
  assert.equal(biased.combination.bias!.length, 10);
  await checkParity(biased, 'sade with test-time weights and prior bias');
  writeFileSync(file, JSON.stringify({ chosen: { weights: [1, 2] } }));
  assert.throws(() => runToOnnx(run, { version, testTime: file }), TestTimeFileError);
  writeFileSync(file, '{ not json');
  assert.throws(() => runToOnnx(run, { version, testTime: file }), TestTimeFileError);
  assert.throws(() => runToOnnx(run, { version, preference: [1, 0, 0] }), PreferenceError);
}

function badInputs(run: LoadedRun, dir: string): void {
  void dir;
  // A preference of the wrong length.
  assert.throws(() => runToOnnx(run, { version, preference: [0.5, 0.5] }), PreferenceError);
  // A module without an ONNX form is named.
  class Mystery extends nn.Module {
    forward(x: torch.Tensor): torch.Tensor {
      return x;
    }
  }
  const g = new onnx.OnnxGraph();
  assert.throws(
    () => onnx.moduleToOnnx(new Mystery(), g, g.input('x', [1]), 'mystery'),
    (e: Error) => {
      assert.ok(e instanceof onnx.OnnxExportError);
      assert.match(e.message, /Mystery \('mystery'\) has no ONNX mapping/);
      return true;
    },
  );
  const g2 = new onnx.OnnxGraph();
  assert.throws(
    () => systemToOnnx(run.session.system, g2, g2.input('image', ['batch', 1, 28, 28]), { weights: [1, 0] }),
    ExpertWeightsError,
  );
}

const tailor = (...args: string[]) => runTailor(args);

/** The command: a model ONNX Runtime runs, and named errors that leave no file behind. */
async function cli(dir: string): Promise<void> {
  const out = join(dir, 'prl.onnx');
  const ok = tailor(
    'export',
    '-r',
    join(dir, 'prl'),
    '--preference',
    '2,1,1',
    '--threads',
    '1',
    '--out',
    out,
  );
  assert.equal(ok.code, 0, ok.err);
  assert.match(ok.out, /wrote .*prl\.onnx/);
  const session = await ort.InferenceSession.create(readFileSync(out));
  assert.deepEqual([...session.inputNames], ['image']);
  assert.deepEqual([...session.outputNames], ['logits', 'probabilities']);
  const x = images([1, 28, 28]);
  const y = await session.run({
    image: new ort.Tensor('float32', x.data.subarray(0, 3 * 784), [3, 1, 28, 28]),
  });
  assert.deepEqual(y.logits!.dims, [3, 10]);

  const refused = (args: string[], pattern: RegExp) => {
    const target = join(dir, 'refused.onnx');
    const r = tailor('export', ...args, '--threads', '1', '--out', target);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, pattern);
    assert.doesNotMatch(r.err, /\n\s+at /, 'no stack trace');
    assert.ok(!existsSync(target), `${args.join(' ')} left a file`);
  };
  // A run without weights: no checkpoint at all, or a checkpoint whose weights file is gone.
  mkdirSync(join(dir, 'empty'));
  refused(['-r', join(dir, 'empty')], /^tailor: no checkpoint at/);
  mkdirSync(join(dir, 'no-weights'));
  copyFileSync(join(dir, 'prl', 'checkpoint-last.json'), join(dir, 'no-weights', 'checkpoint-last.json'));
  refused(['-r', join(dir, 'no-weights')], /^tailor: .*safetensors/);
  // A preference of the wrong length, or for a run without a hypernetwork.
  refused(
    ['-r', join(dir, 'prl'), '--preference', '0.5,0.5'],
    /--preference has 2 weights but the run has 3 experts/,
  );
  refused(['-r', join(dir, 'ce'), '--preference', '1,1,1'], /PRL checkpoints only/);
  refused(['-r', join(dir, 'ce'), '--format', 'tflite'], /--format tflite/);
}

for (const [arch, what] of [
  ['resnext50_32x4d', 'bottlenecks, grouped convolutions, max pool'],
  ['resnet10', "RIDE's ResNet-10: basic blocks"],
] as const) {
  test(`ONNX export: an ImageNet-size ${arch} backbone (${what})`, async () => {
    torch.manualSeed(5);
    const model = new ResNetImageNet({
      arch,
      classes: 7,
      experts: 2,
      layer3Planes: 64,
      layer4Planes: 64,
    });
    // Batch norm statistics of a trained network, not the identity of a fresh one.
    torch.noGrad(() => {
      for (const [name, b] of model.namedBuffers())
        if (name.endsWith('running_mean')) torch.aten.normal_(b, 0, 0.1);
        else if (name.endsWith('running_var')) torch.aten.uniform_(b, 0.5, 1.5);
    });
    // The loss plays no part in the forward pass.
    const system = plainSystem(model, {} as Loss);
    const g = new onnx.OnnxGraph();
    g.output('logits', systemToOnnx(system, g, g.input('image', ['batch', 3, 64, 64])), ['batch', 7]);
    const bytes = g.encode({ producerVersion: version, graphName: arch });
    const n = 8;
    torch.manualSeed(6);
    const data = torch.tidy(() => torch.randn([n, 3, 64, 64]).toFloat32Array());
    const ours = torch.noGrad(() =>
      torch.tidy(() =>
        system.evalForward(torch.tensor(data, { shape: [n, 3, 64, 64] })).output.toFloat32Array(),
      ),
    );
    const session = await ort.InferenceSession.create(bytes);
    const out = await session.run({ image: new ort.Tensor('float32', data, [n, 3, 64, 64]) });
    const diff = maxAbsDiff(ours, out.logits!.data as Float32Array);
    assert.ok(diff <= TOLERANCE, `${arch}: ONNX logits differ from tailor's by ${diff}`);
    console.log(`${arch} (2 experts, ${n} images): max |logit difference| ${diff.toExponential(2)}`);
    model.dispose();
  });
}
