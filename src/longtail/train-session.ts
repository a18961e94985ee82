// Trains a built session: the optimizer, schedule, data and checkpoint record all come from the
// session's config, so the `train` command and the tests run exactly the same training.
import { buildOptimizer, buildScheduler } from './experiment.js';
import { sessionRecord, type Session } from './session.js';
import { systemParameters } from './system.js';
import { trainSystem, type TrainResult } from './trainer.js';

export interface SessionTrainOptions {
  epochs: number;
  seed: number;
  runDir: string;
  resumeFrom?: string;
  quiet?: boolean;
  log?: (line: string) => void;
}

export function trainSession(session: Session, o: SessionTrainOptions): Promise<TrainResult> {
  const { config, data } = session;
  const optimizer = buildOptimizer(config, systemParameters(session.system));
  const scheduler = buildScheduler(config, optimizer);
  return trainSystem({
    system: session.system,
    optimizer,
    scheduler,
    train: data.train,
    test: data.val,
    trainCounts: data.trainCounts,
    trainTransform: session.trainTransform,
    testTransform: session.testTransform,
    epochs: o.epochs,
    batchSize: data.batchSize,
    balancedSampling: data.balancedSampling,
    ...(config.mixup ? { mixupAlpha: config.mixup.alpha } : {}),
    seed: o.seed,
    runDir: o.runDir,
    ...(config.trainer.eval_period ? { evalPeriod: config.trainer.eval_period } : {}),
    ...(config.trainer.save_period ? { savePeriod: config.trainer.save_period } : {}),
    ...(o.resumeFrom ? { resumeFrom: o.resumeFrom } : {}),
    checkpointExtra: sessionRecord(session) as unknown as Record<string, unknown>,
    quiet: o.quiet ?? false,
    ...(o.log ? { log: o.log } : {}),
  });
}
