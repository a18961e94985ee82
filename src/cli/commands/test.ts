// tailor test -r CHECKPOINT [--json]: the uniform test set, top-1 and many/medium/few.
import { meanExpertsPerImage, testPredictions, uniformDetail } from '../../longtail/index.js';
import { JSON_OPTION, defineCommand } from '../command.js';
import { CHECKPOINT_OPTIONS, groupsLine, jsonGroup, loadRunForEvaluation } from './longtail-common.js';

const HELP = `usage: tailor test -r CHECKPOINT [-c CONFIG] [--json] [--preference a,b,c] [--root DIR] [--threads N] [--device D]

Evaluates a checkpoint on the uniform (balanced) test set with the test transform:
top-1 and the many (>100 training images) / medium (20..100) / few (<20) class groups.
--preference (PRL checkpoints): generate the experts for this preference first.
A RIDE-EA run (arch *EAModel) is evaluated with its routers, and the mean number of experts
consulted per image is printed (experts_per_image in --json).
A weights file of the SADE / RIDE / BalPoE trainers (checkpoint-epochN.pth, model_best.pth) or a
.safetensors state dict loads with -c CONFIG, the training config that builds its model (arch,
data_loader); its name layout is recognised and named on stderr.`;

export const run = defineCommand({
  help: HELP,
  options: {
    ...CHECKPOINT_OPTIONS,
    ...JSON_OPTION,
    config: { type: 'string', short: 'c' },
    preference: { type: 'string' },
  },
  run: async ({ values }) => {
    const { loaded, system } = loadRunForEvaluation(
      { ...values, 'train-config': values['train-config'] ?? values.config },
      HELP,
    );
    const p = await testPredictions(loaded.session);
    const u = uniformDetail(p, loaded.session.data.trainCounts);
    const consulted = meanExpertsPerImage(p);
    if (values.json) {
      console.log(
        JSON.stringify({
          checkpoint: loaded.checkpoint,
          n: u.n,
          ...jsonGroup(u),
          ece: u.ece,
          per_class: u.per_class,
          ...(system.kind === 'prl' ? { preference: system.preference.weights } : {}),
          ...(consulted !== null ? { experts_per_image: consulted } : {}),
        }),
      );
    } else {
      console.log(`${loaded.checkpoint}: uniform test set (${u.n} images)`);
      console.log(groupsLine(u));
      if (consulted !== null) console.log(`experts per image (routed): ${consulted.toFixed(3)}`);
    }
    return 0;
  },
});
