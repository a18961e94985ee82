// Another trainer's weights file through the real CLI: `tailor test -c CONFIG -r FILE` and
// test-time-train / tune-test-time --train-config recognise the SADE/RIDE/BalPoE layout (named on stderr) and agree; a config of another
// model or no config is a named error. (The mapping's numbers: reference-checkpoints.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { ResNetCifar } from '../../src/longtail/models/resnet-cifar.js';
import { repoRoot, runTailor } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');

/** Tailor's name of a model tensor as SADE's trainer saves it (DataParallel, model.py's Model). */
const sadeName = (name: string): string =>
  'module.backbone.' +
  name
    .replace(/^experts\.(\d+)\.(layer\d)\./, '$2s.$1.')
    .replace(/^experts\.(\d+)\.classifier\./, 'linears.$1.');

test(
  'test and test-time-train evaluate a SADE-layout weights file with the training config',
  { skip: !fmnistAvailable && 'Fashion-MNIST not installed' },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-refck-'));
    try {
      const cfg = JSON.parse(readFileSync(join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json'), 'utf8'));
      cfg.data_loader.args.test_per_class = 4;
      const config = join(dir, 'sade.json');
      writeFileSync(config, JSON.stringify(cfg));
      const args = cfg.arch.args;
      torch.manualSeed(3);
      const model = new ResNetCifar({
        classes: args.num_classes,
        experts: args.num_experts,
        inChannels: args.in_channels,
        reduceDimension: args.reduce_dimension,
        normedClassifier: args.use_norm,
      });
      const state = model.stateDict();
      const sade = join(dir, 'model_best.safetensors');
      torch.saveSafetensors(
        sade,
        Object.fromEntries(Object.entries(state).map(([n, t]) => [sadeName(n), t])),
      );
      model.dispose();

      const a = runTailor(['test', '-c', config, '-r', sade, '--json']);
      assert.equal(a.code, 0, a.err);
      assert.match(a.err, /SADE\/RIDE\/BalPoE multi-expert layout .* under 'module\.backbone\.'/);
      const ra = JSON.parse(a.out);
      assert.equal(ra.n, 40);

      // test-time-train's -c is the test-time config: the training config comes with --train-config.
      const ttt = runTailor([
        'test-time-train',
        '-c',
        'configs/fmnist_test_time.json',
        '--set',
        'trainer.epochs=1',
        '--set',
        'method=aggregation',
        '--train-config',
        config,
        '--checkpoint',
        sade,
        '--json',
        '--quiet',
      ]);
      assert.equal(ttt.code, 0, ttt.err);
      assert.match(ttt.err, /SADE\/RIDE\/BalPoE multi-expert layout/);
      assert.ok(Number.isFinite(JSON.parse(ttt.out).mean_top1_aggregation));
      // --save has no run of its own to write into: refused before the searches run.
      const save = runTailor([
        'test-time-train',
        '-c',
        'configs/fmnist_test_time.json',
        '--train-config',
        config,
        '-r',
        sade,
        '--save',
      ]);
      assert.equal(save.code, 2, save.err);
      assert.match(save.err, /--save writes into a tailor run's results\.json; .* is a weights file/);
      assert.ok(!existsSync(join(dir, 'results.json')));

      // tune-test-time takes the same --set fields; --write keeps them beside the chosen value.
      const tuned = join(dir, 'tuned.json');
      const tune = runTailor([
        'tune-test-time',
        '-c',
        'configs/fmnist_test_time.json',
        '--set',
        'trainer.epochs=1',
        '--grid',
        'lr=0.002',
        '--train-config',
        config,
        '-r',
        sade,
        '--write',
        tuned,
      ]);
      assert.equal(tune.code, 0, tune.err);
      const written = JSON.parse(readFileSync(tuned, 'utf8'));
      assert.equal(written.trainer.epochs, 1);
      assert.equal(written.optimizer.args.lr, 0.002);

      // A linear classifier in the config, cosine ones in the file: the remedy is named, no stack trace.
      cfg.arch.args.use_norm = false;
      writeFileSync(config, JSON.stringify(cfg));
      const wrong = runTailor(['test', '-c', config, '-r', sade]);
      assert.equal(wrong.code, 2);
      assert.match(
        wrong.err,
        /^tailor: .*model_best\.safetensors: .*has a cosine classifier: set arch\.args\.use_norm to true/m,
      );
      assert.doesNotMatch(wrong.err, /\n\s+at /);
      const noConfig = runTailor(['test', '-r', sade]);
      assert.equal(noConfig.code, 2);
      assert.match(noConfig.err, /give the training config that builds its model/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
