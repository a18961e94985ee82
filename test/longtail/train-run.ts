// One seeded training run of a config, as the resume tests need it: the result and every weight
// of the trained system (copied out, so the system can be freed).
import * as torch from '../../src/torch/index.js';
import type { TrainConfig } from '../../src/longtail/config/config.js';
import { buildSession } from '../../src/longtail/config/session.js';
import { systemStateDict } from '../../src/longtail/systems/system.js';
import { trainSession } from '../../src/longtail/workflows/train.js';

export async function trainRun(
  c: TrainConfig,
  runDir: string,
  epochs: number,
  options: { resumeFrom?: string; file?: string; overrides?: Parameters<typeof buildSession>[2] } = {},
) {
  torch.manualSeed(0);
  const s = buildSession(c, options.file ?? 'test', options.overrides);
  const result = await trainSession(s, {
    epochs,
    seed: 0,
    runDir,
    quiet: true,
    log: () => {},
    ...(options.resumeFrom ? { resumeFrom: options.resumeFrom } : {}),
  });
  const weights = Object.fromEntries(
    Object.entries(systemStateDict(s.system)).map(([k, v]) => [k, v.toFloat64Array()]),
  );
  for (const m of Object.values(s.system.modules)) m.dispose();
  return { result, weights };
}
