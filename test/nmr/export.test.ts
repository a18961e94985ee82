// ONNX export of the NMR U-Net: saved as `tailor nmr train` saves it, exported, and run by ONNX
// Runtime on 64 spectra; the output must match tailor's forward pass within 1e-4. The default
// architecture (GroupNorm, GELU, squeeze-excitation, transposed convolutions), a stack model with
// a tanh head, LayerNorm-style groups and the polyphase convolution, lengths the levels do not
// divide (edge padding in the graph), and the command with its named errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import * as torch from '../../src/torch/index.js';
import { UNet1d, denoiserToOnnx, type UNetConfig } from '../../src/nmr/index.js';
import { modelMetadata } from '../../src/nmr/model/denoise.js';
import { runTailor } from '../helpers.js';

const N = 64;
// One thread: libtorch's OpenMP pool slows down many times over when the cores are shared.
torch.setNumThreads(1);
const TOLERANCE = 1e-4;

/** A model with every weight drawn (the head too, which starts at zero), saved as a checkpoint. */
function savedModel(dir: string, name: string, config: Partial<UNetConfig>): string {
  torch.manualSeed(3);
  const model = new UNet1d(config);
  torch.noGrad(() => {
    for (const p of model.parameters()) torch.aten.normal_(p, 0, 0.2);
  });
  const base = join(dir, name);
  torch.saveCheckpoint(base, {
    weights: model.stateDict(),
    metadata: modelMetadata(model.config),
    epoch: 0,
    torchRng: false,
  });
  model.dispose();
  return `${base}.json`;
}

/** 64 spectra: Lorentzian lines on noise, each at its own scale (0.1 to 1). */
function spectra(levels: number, points: number): Float32Array {
  const data = new Float32Array(N * levels * points);
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let s = 0; s < N * levels; s++) {
    const scale = 0.1 + 0.9 * rand();
    const centre = points * rand();
    for (let i = 0; i < points; i++)
      data[s * points + i] = scale * (1 / (1 + ((i - centre) / 3) ** 2) + 0.05 * (rand() - 0.5));
  }
  return data;
}

async function parity(checkpoint: string, points: number, label: string): Promise<number> {
  const exported = denoiserToOnnx(checkpoint, '0.0.0-test');
  const levels = exported.model.config.inputLevels;
  const x = spectra(levels, points);
  const ours = torch.noGrad(() =>
    torch.tidy(() =>
      exported.model.forward(torch.tensor(x, { shape: [N, levels, points] })).toFloat32Array(),
    ),
  );
  const session = await ort.InferenceSession.create(exported.bytes);
  const out = await session.run({ spectra: new ort.Tensor('float32', x, [N, levels, points]) });
  const theirs = out.denoised!;
  assert.deepEqual(theirs.dims, [N, 1, points]);
  const data = theirs.data as Float32Array;
  let worst = 0;
  for (let k = 0; k < ours.length; k++) worst = Math.max(worst, Math.abs(ours[k]! - data[k]!));
  assert.ok(worst <= TOLERANCE, `${label}: ONNX output differs from tailor's by ${worst}`);
  console.log(`${label}: max |difference| ${worst.toExponential(2)} over ${N} spectra`);
  exported.model.dispose();
  return worst;
}

test('NMR U-Net: ONNX parity with tailor', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tailor-nmr-export-'));
  try {
    const small = { channels: [16, 32, 64, 64], groups: 8 };
    const single = savedModel(dir, 'single', small);
    await t.test('default blocks, length a multiple of 8', async () => {
      await parity(single, 256, 'U-Net (single spectrum, 256 points)');
    });
    await t.test('a length the levels do not divide (edge padding)', async () => {
      await parity(single, 203, 'U-Net (single spectrum, 203 points)');
    });
    const stack = savedModel(dir, 'stack', {
      ...small,
      inputLevels: 3,
      head: 'tanh',
      norm: 'layer',
      conv: 'polyphase',
      se: 'bottleneck+shallow',
    });
    await t.test('stack model, tanh head, one group, polyphase', async () => {
      await parity(stack, 130, 'U-Net (stack of 3 levels, 130 points)');
    });
    await t.test('tailor nmr export', () => cli(dir, single));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const tailor = (...args: string[]) => runTailor(args);

async function cli(dir: string, checkpoint: string): Promise<void> {
  const out = join(dir, 'unet.onnx');
  const ok = tailor('nmr', 'export', '--model', checkpoint, '--out', out);
  assert.equal(ok.code, 0, ok.err);
  const session = await ort.InferenceSession.create(readFileSync(out));
  assert.deepEqual([...session.inputNames], ['spectra']);
  assert.deepEqual([...session.outputNames], ['denoised']);
  const refused = (args: string[], pattern: RegExp) => {
    const target = join(dir, 'refused.onnx');
    const r = tailor('nmr', 'export', ...args, '--out', target);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, pattern);
    assert.ok(!existsSync(target), `${args.join(' ')} left a file`);
  };
  refused(['--model', join(dir, 'absent.json')], /^tailor: .*absent/);
  // A checkpoint whose weights are gone.
  const weights = checkpoint.replace(/\.json$/, '.safetensors');
  rmSync(weights);
  refused(['--model', checkpoint], /^tailor: .*safetensors/);
}
