// Load a trained long-tail run and classify test images at a chosen preference over the experts
// (PRL: the hypernetwork generates the experts for it; here weighted towards the tail expert).
// Usage: longtail-classify [RUN_DIR]. RUN_DIR is a run of `tailor train` with a PRL config; without
// one, a tiny PRL run (12 images of the head class, 1 epoch) is trained first on Fashion-MNIST
// (Debian's dataset-fashion-mnist, /usr/share/datasets/fashion-mnist). Needs the libtorch engine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSession, loadRun, parseConfig, testPredictions, trainSession } from 'tailor/longtail';

/** Trains a tiny PRL run through the library (what `tailor train` does) and returns its directory. */
async function tinyRun(): Promise<string> {
  const config = parseConfig(
    JSON.stringify({
      name: 'example_prl',
      seed: 0,
      arch: {
        type: 'ResNet32Model',
        args: { num_classes: 10, in_channels: 1, reduce_dimension: true, use_norm: true, num_experts: 3 },
      },
      data_loader: { type: 'ImbalanceFashionMNISTDataLoader', args: { batch_size: 16, imb_factor: 0.01 } },
      optimizer: { type: 'SGD', args: { lr: 0.1, momentum: 0.9 } },
      loss: { type: 'PRLLoss', args: {} },
      prl: {
        expert_losses: [{ type: 'forward' }, { type: 'uniform' }, { type: 'backward', tau: 1 }],
      },
      trainer: { epochs: 1 },
    }),
    'example_prl.json',
  );
  const session = buildSession(config, 'example_prl.json', { trainMaxPerClass: 12, testPerClass: 4 });
  const runDir = mkdtempSync(join(tmpdir(), 'tailor-longtail-'));
  await trainSession(session, { epochs: 1, seed: 0, runDir, quiet: true, log: () => {} });
  for (const m of Object.values(session.system.modules)) m.dispose();
  return runDir;
}

const given = process.argv[2];
const runDir = given ?? (await tinyRun());
try {
  const { session, epoch } = loadRun(runDir);
  if (session.system.kind !== 'prl') throw new Error(`${runDir} is not a PRL run`);
  console.log(`loaded ${runDir.split('/').pop()} (epoch ${epoch}, ${session.system.experts} experts)`);
  for (const weights of [
    [1 / 3, 1 / 3, 1 / 3],
    [0.1, 0.2, 0.7],
  ]) {
    // The same system at another preference: every evaluation now weights these experts.
    const at = session.system.at(weights);
    const p = await testPredictions({ ...session, system: at });
    const predicted = Array.from({ length: p.n }, (_, i) => {
      const row = p.logits.subarray(i * p.classes, (i + 1) * p.classes);
      return row.indexOf(Math.max(...row));
    });
    const correct = predicted.filter((c, i) => c === p.labels[i]).length;
    const first = predicted.slice(0, 8).join(' ');
    console.log(
      `preference ${at.preference.weights.map((w) => w.toFixed(2)).join('/')}: ` +
        `${correct}/${p.n} test images right (first predictions ${first})`,
    );
  }
  for (const m of Object.values(session.system.modules)) m.dispose();
} finally {
  if (!given) rmSync(runDir, { recursive: true, force: true });
}
