// Graph mode's step discipline, on the CPU with a stand-in for CUDA graphs: a "capture" stores the
// step and each "replay" runs it again, so everything a real capture depends on is exercised
// here (static inputs, the step number and learning rate as tensors, cached loss constants, the
// warm-up steps, the eager last batch, captures redone when the DRW weights switch on, the
// fallback when a capture fails). What the stand-in cannot show, kernels frozen at capture time,
// the GPU check does (scripts/gpu-check.sh).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as torch from '../../src/torch/index.js';
import { parseConfig } from '../../src/longtail/config/config.js';
import { buildSession, trainingSetup } from '../../src/longtail/config/session.js';
import { sessionTrainOptions } from '../../src/longtail/workflows/train.js';
import { trainSystem, type TrainOptions } from '../../src/longtail/train/trainer.js';
import { WARMUP_STEPS, type GraphBackend } from '../../src/longtail/train/graph-step.js';
import { GraphModeUnavailableError } from '../../src/longtail/train/graph.js';
import { stepContext } from '../../src/longtail/train/step-context.js';
import { MultiExpertModel } from '../../src/longtail/models/multi-expert.js';
import { repoRoot } from '../helpers.js';

const fmnistAvailable = existsSync('/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz');
const skip = !fmnistAvailable && 'Fashion-MNIST not installed';

/** A stand-in backend: capture keeps the step, replay runs it; it counts both. */
function standIn(failCapture = false) {
  const counts = { captures: 0, replays: 0, sideStream: 0, disposed: 0 };
  const backend: GraphBackend = {
    onSideStream: (_device, fn) => {
      counts.sideStream++;
      return fn();
    },
    capture(_device, fn) {
      if (failCapture) throw new Error('operation not permitted when stream is capturing');
      counts.captures++;
      return {
        replay: () => {
          counts.replays++;
          fn();
        },
        dispose: () => {
          counts.disposed++;
        },
      };
    },
  };
  return { backend, counts };
}

interface Run {
  weights: Map<string, Float32Array>;
  losses: number[];
  graph: string;
  branchStreams: boolean;
  lines: string[];
  steps: number;
  /** Whether branch streams were on, at each of the run's calls of MultiExpertModel.perExpert. */
  branchStreamsSeen: boolean[];
}

// Every run records whether branch streams were on at each per-expert call (a stand-in's capture
// runs nothing and its replays run the step as eager code, so these are the warm-up steps' and
// the eager steps' forwards).
let seen: boolean[] = [];
const perExpert = MultiExpertModel.prototype.perExpert;
MultiExpertModel.prototype.perExpert = function (this: MultiExpertModel, fn) {
  seen.push(torch.branchStreamsEnabled());
  return perExpert.call(this, fn);
};

async function train(
  config: string,
  extra: Partial<TrainOptions>,
  epochs = 2,
  mutate?: (c: ReturnType<typeof parseConfig>) => void,
  perClass = 14,
  beforeTraining?: (optimizer: TrainOptions['optimizer']) => void,
): Promise<Run> {
  const file = join(repoRoot, 'configs', config);
  const c = parseConfig(readFileSync(file, 'utf8'), file);
  c.data_loader.args = { ...c.data_loader.args, batch_size: 16 };
  mutate?.(c);
  torch.manualSeed(0);
  const s = buildSession(c, file, { trainMaxPerClass: perClass, testPerClass: 2 });
  const setup = trainingSetup(s);
  const { optimizer } = setup;
  beforeTraining?.(optimizer);
  const dir = mkdtempSync(join(tmpdir(), 'tailor-graph-'));
  const lines: string[] = [];
  seen = [];
  try {
    const result = await trainSystem({
      ...sessionTrainOptions(s, setup),
      epochs,
      seed: 0,
      runDir: dir,
      checkpointExtra: {},
      quiet: true,
      log: (l) => lines.push(l),
      ...extra,
    });
    const weights = new Map<string, Float32Array>();
    for (const [name, m] of Object.entries(s.system.modules))
      for (const [k, t] of Object.entries(m.stateDict()))
        if (t.dtype === 'float32') weights.set(`${name}.${k}`, t.toFloat32Array());
    return {
      weights,
      losses: result.history.map((h) => h.train_loss),
      graph: result.graph,
      branchStreams: result.branchStreams,
      lines,
      steps: epochs * Math.ceil(s.data.train.labels.length / 16),
      branchStreamsSeen: seen,
    };
  } finally {
    for (const m of Object.values(s.system.modules)) m.dispose();
    optimizer.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Training is seeded, so a run trained again with the same settings is the same run: the runs
// that several tests compare against are trained once and shared (each test stays runnable alone).
const eagerRuns = new Map<string, Promise<Run>>();
/** The eager run of `config` with the defaults of train(), trained on the first call. */
function eagerRun(config: string): Promise<Run> {
  if (!eagerRuns.has(config)) eagerRuns.set(config, train(config, {}));
  return eagerRuns.get(config)!;
}
/** A graph-mode run and its stand-in backend's counts. */
interface Graphed {
  run: Run;
  counts: ReturnType<typeof standIn>['counts'];
}
const graphedRuns = new Map<string, Promise<Graphed>>();
/** The graph-mode run of `config` with the defaults of train() and a stand-in, trained on the first call. */
function graphedRun(config: string): Promise<Graphed> {
  if (!graphedRuns.has(config)) {
    const { backend, counts } = standIn();
    graphedRuns.set(
      config,
      train(config, { graph: 'graph', graphBackend: backend }).then((run) => ({ run, counts })),
    );
  }
  return graphedRuns.get(config)!;
}

function maxDifference(a: Run, b: Run): number {
  let worst = 0;
  for (const [k, va] of a.weights) {
    const vb = b.weights.get(k)!;
    for (let i = 0; i < va.length; i++) {
      const d = Math.abs(va[i]! - vb[i]!);
      if (d > worst && process.env.GRAPH_DEBUG) console.log(k, i, va[i], vb[i]);
      worst = Math.max(worst, d);
    }
  }
  return worst;
}

test(
  'graph mode trains as eager mode does: static inputs, step and learning-rate tensors',
  { skip },
  async () => {
    const eager = await eagerRun('fmnist_lt_ir100_sade.json');
    const { run: graphed, counts } = await graphedRun('fmnist_lt_ir100_sade.json');
    assert.equal(graphed.graph, 'graph');
    assert.equal(eager.graph, 'eager');
    // one capture (nothing changes between epochs), after the warm-up steps on the side stream
    assert.equal(counts.captures, 1);
    assert.equal(counts.sideStream, WARMUP_STEPS);
    // every full batch after the warm-up is a replay; the last, partial batch of each epoch is eager
    const n = eager.steps;
    assert.ok(
      counts.replays >= n - WARMUP_STEPS - 2 && counts.replays <= n - WARMUP_STEPS,
      `${counts.replays} of ${n}`,
    );
    assert.equal(counts.disposed, 1);
    // the same training up to float rounding (SGD's capturable update rounds once more)
    assert.ok(maxDifference(eager, graphed) < 2e-5, `weights differ by ${maxDifference(eager, graphed)}`);
    eager.losses.forEach((l, i) => assert.ok(Math.abs(l - graphed.losses[i]!) < 1e-4, `epoch ${i + 1} loss`));
  },
);

for (const [method, config] of [
  ['LDAM-DRW', 'fmnist_lt_ir100_ldam_drw.json'],
  ['RIDE', 'fmnist_lt_ir100_ride.json'],
] as const) {
  test(`${method} captures again when its class weights switch on`, { skip }, async () => {
    const mutate = (c: ReturnType<typeof parseConfig>) => {
      (c.loss.args as Record<string, unknown>).reweight_epoch = 1;
    };
    // every class needs an image for LDAM's margins: 100 in the head class leaves 1 in the tail
    const eager = await train(config, {}, 2, mutate, 100);
    const { backend, counts } = standIn();
    const graphed = await train(config, { graph: 'graph', graphBackend: backend }, 2, mutate, 100);
    assert.equal(counts.captures, 2);
    assert.equal(counts.disposed, 2);
    // one warm-up step before the second capture
    assert.equal(counts.sideStream, WARMUP_STEPS + 1);
    assert.ok(maxDifference(eager, graphed) < 2e-5, `weights differ by ${maxDifference(eager, graphed)}`);
  });
}

test('a capture that fails leaves one line naming the cause, then trains eagerly', { skip }, async () => {
  const eager = await eagerRun('fmnist_lt_ir100_sade.json');
  const { backend } = standIn(true);
  const fallback = await train('fmnist_lt_ir100_sade.json', { graph: 'graph', graphBackend: backend });
  assert.equal(fallback.graph, 'eager');
  const said = fallback.lines.filter((l) => l.startsWith('graph mode:'));
  // first with branch streams, then on one stream
  assert.equal(said.length, 2);
  assert.match(said[0]!, /branch streams .*could not be captured.*capturing it on one stream/);
  assert.match(
    said[1]!,
    /could not be captured.*operation not permitted when stream is capturing.*training on eagerly/,
  );
  // the warm-up steps before the capture used the capturable update (float rounding apart)
  const d = maxDifference(eager, fallback);
  assert.ok(d < 2e-5, `weights differ by ${d}`);
});

test(
  'the warm-up steps and the capture run with branch streams (experts, PRL draws), with the same arithmetic',
  { skip },
  async () => {
    for (const config of [
      'fmnist_lt_ir100_sade.json',
      'fmnist_lt_ir100_prl.json',
      'fmnist_lt_ir100_prl_released.json',
    ]) {
      const { run: streams } = await graphedRun(config);
      // the forwards with branch streams are the warm-up steps' (a real capture records them too)
      const seen = streams.branchStreamsSeen;
      assert.equal(seen.filter(Boolean).length, WARMUP_STEPS, config);
      assert.ok(seen.length > WARMUP_STEPS, config);
      // trainer.branch_streams: false in the config keeps one stream
      const one = await train(config, { graph: 'graph', graphBackend: standIn().backend }, 2, (c) => {
        c.trainer.branch_streams = false;
      });
      assert.equal(one.branchStreamsSeen.filter(Boolean).length, 0, config);
      assert.equal(streams.branchStreams, true, config);
      assert.equal(one.branchStreams, false, config);
      assert.equal(maxDifference(streams, one), 0, config);
    }
    const eager = await eagerRun('fmnist_lt_ir100_sade.json');
    assert.equal(eager.branchStreamsSeen.filter(Boolean).length, 0);
    assert.ok(eager.branchStreamsSeen.length > 0);
    assert.equal(eager.branchStreams, false);
  },
);

test('a capture that fails with branch streams is captured again on one stream', { skip }, async () => {
  const { backend, counts } = standIn();
  const failing: GraphBackend = {
    ...backend,
    capture(device, fn) {
      if (torch.branchStreamsEnabled()) throw new Error('operation not permitted when stream is capturing');
      return backend.capture(device, fn);
    },
  };
  const run = await train('fmnist_lt_ir100_sade.json', { graph: 'graph', graphBackend: failing });
  assert.equal(run.graph, 'graph');
  assert.equal(run.branchStreams, false);
  assert.equal(counts.captures, 1);
  assert.ok(counts.replays > 0);
  const said = run.lines.filter((l) => l.startsWith('graph mode:'));
  assert.equal(said.length, 1);
  assert.match(
    said[0]!,
    /branch streams .* could not be captured \(operation not permitted.*\); capturing it on one stream$/,
  );
});

test(
  "PRL's preference draws (both variants) and mixup's weight reach the capture as tensors",
  { skip },
  async () => {
    for (const [config, mutate] of [
      ['fmnist_lt_ir100_prl.json', undefined],
      // the released variant: one draw per expert call, all read from the draws tensor
      ['fmnist_lt_ir100_prl_released.json', undefined],
      [
        'fmnist_lt_ir100_sade.json',
        (c: ReturnType<typeof parseConfig>) => {
          c.mixup = { alpha: 1 };
        },
      ],
      [
        'fmnist_lt_ir100_prl.json',
        (c: ReturnType<typeof parseConfig>) => {
          c.mixup = { alpha: 1 };
        },
      ],
    ] as const) {
      const eager = mutate ? await train(config, {}, 2, mutate) : await eagerRun(config);
      const stand = standIn();
      const { run: graphed, counts } = mutate
        ? {
            run: await train(config, { graph: 'graph', graphBackend: stand.backend }, 2, mutate),
            counts: stand.counts,
          }
        : await graphedRun(config);
      assert.equal(graphed.graph, 'graph', config);
      assert.equal(counts.captures, 1, config);
      const d = maxDifference(eager, graphed);
      assert.ok(d < 2e-5, `${config}: weights differ by ${d}`);
    }
  },
);

for (const layout of [{}, { channelsLast: true }]) {
  const name = layout.channelsLast ? 'bf16 autocast with channels-last batches' : 'bf16 autocast';
  test(`${name} runs inside the captured step`, { skip }, async () => {
    const eager = await train('fmnist_lt_ir100_sade.json', { amp: 'bf16', ...layout });
    const { backend, counts } = standIn();
    const graphed = await train('fmnist_lt_ir100_sade.json', {
      amp: 'bf16',
      ...layout,
      graphBackend: backend,
      graph: 'graph',
    });
    assert.equal(graphed.graph, 'graph');
    assert.equal(counts.captures, 1);
    // bf16 rounds each product to 8 bits of mantissa: the extra rounding of the update shows more
    const d = maxDifference(eager, graphed);
    assert.ok(d < 1e-3, `weights differ by ${d}`);
  });
}

test(
  'AdamW trains in graph mode: its learning rate and step counts are device tensors',
  { skip },
  async () => {
    const adamw = (c: ReturnType<typeof parseConfig>) => {
      c.optimizer = { type: 'AdamW', args: { lr: 0.001, weight_decay: 0.01 } };
    };
    // Graph mode against eager mode with the same (capturable) arithmetic: the graph's static
    // inputs, step and learning-rate tensors change nothing.
    const capturable = (o: TrainOptions['optimizer']) => {
      o.capturable = true;
    };
    const eager = await train('fmnist_lt_ir100_sade.json', {}, 2, adamw, 14, capturable);
    const { backend, counts } = standIn();
    const graphed = await train(
      'fmnist_lt_ir100_sade.json',
      { graph: 'graph', graphBackend: backend },
      2,
      adamw,
    );
    assert.equal(graphed.graph, 'graph');
    assert.equal(counts.captures, 1);
    assert.ok(counts.replays > 0);
    const d = maxDifference(eager, graphed);
    assert.ok(d < 2e-5, `weights differ by ${d}`);
    // Against the eager form (bias corrections in double on the host), the losses agree to float
    // rounding; single weights may not, since Adam scales each update to about lr whatever the
    // gradient's size, so a near-zero gradient's rounding can flip an update's sign.
    const plain = await train('fmnist_lt_ir100_sade.json', {}, 2, adamw);
    plain.losses.forEach((l, i) =>
      assert.ok(Math.abs(l - graphed.losses[i]!) < 1e-3 * l, `epoch ${i + 1} loss`),
    );
  },
);

test('a step graph mode cannot capture: one line under auto, a named error under on', { skip }, async () => {
  // fp16 autocast's gradient scaler reads its scale back every step (the CPU refuses fp16, so
  // the context is made here directly, as the trainer makes it)
  const file = join(repoRoot, 'configs', 'fmnist_lt_ir100_sade.json');
  const c = parseConfig(readFileSync(file, 'utf8'), file);
  const s = buildSession(c, file, { trainMaxPerClass: 14, testPerClass: 2 });
  const setup = trainingSetup(s);
  const { backend, counts } = standIn();
  const options = {
    ...sessionTrainOptions(s, setup),
    epochs: 1,
    seed: 0,
    runDir: '',
    checkpointExtra: {},
    amp: 'fp16' as const,
    graph: 'graph' as const,
    graphBackend: backend,
  };
  const lines: string[] = [];
  const run = { par: null, log: (l: string) => lines.push(l), world: 1, rankBatch: 16 };
  try {
    const ctx = stepContext(options, run);
    assert.equal(ctx.graphed, null);
    ctx.figures.dispose();
    ctx.source?.dispose();
    assert.equal(counts.captures, 0);
    assert.match(
      lines.find((l) => l.startsWith('graph mode:')) ?? '',
      /fp16 autocast reads its gradient scale back to the host every step \(use --amp bf16\); training eagerly/,
    );
    assert.throws(
      () => stepContext({ ...options, graphRequired: true }, run),
      (e: Error) => e instanceof GraphModeUnavailableError && /^--graph on: fp16 autocast/.test(e.message),
    );
  } finally {
    for (const m of Object.values(s.system.modules)) m.dispose();
    setup.optimizer.dispose();
  }
});

test("SGD's capturable mode follows the schedule in its learning-rate tensors", () => {
  const model = new torch.nn.Linear(3, 2);
  const eagerModel = new torch.nn.Linear(3, 2);
  torch.noGrad(() => eagerModel.parameters().forEach((p, i) => p.copy_(model.parameters()[i]!)));
  const opt = new torch.optim.SGD(model.parameters(), { lr: 0.1, momentum: 0.9, weightDecay: 5e-4 });
  const eagerOpt = new torch.optim.SGD(eagerModel.parameters(), {
    lr: 0.1,
    momentum: 0.9,
    weightDecay: 5e-4,
  });
  const sched = new torch.optim.StepLR(opt, { stepSize: 1, gamma: 0.5 });
  const eagerSched = new torch.optim.StepLR(eagerOpt, { stepSize: 1, gamma: 0.5 });
  opt.capturable = true;
  const x = torch.keep(torch.randn([5, 3]));
  try {
    for (let step = 0; step < 4; step++) {
      for (const [m, o] of [
        [model, opt],
        [eagerModel, eagerOpt],
      ] as const) {
        torch.tidy(() => m.forward(x).square().mean().backward());
        if (o === opt) opt.syncLearningRates();
        o.step();
        o.zeroGrad();
      }
      sched.step();
      eagerSched.step();
      const rates = (opt as unknown as { rates: Map<unknown, { tensor: torch.Tensor }> }).rates;
      const written = rates.get(opt.paramGroups[0])!.tensor;
      opt.syncLearningRates();
      assert.equal(written.item(), Math.fround(opt.paramGroups[0]!.lr));
    }
    model.parameters().forEach((p, i) => {
      const a = p.toFloat32Array();
      const b = eagerModel.parameters()[i]!.toFloat32Array();
      a.forEach((v, j) => assert.ok(Math.abs(v - b[j]!) < 1e-6));
    });
    opt.capturable = false;
    assert.equal(opt.capturable, false);
  } finally {
    x.dispose();
    opt.dispose();
    eagerOpt.dispose();
    model.dispose();
    eagerModel.dispose();
  }
});
