// tailor test-all -r CHECKPOINT [--json] [--preference a,b,c]: the eleven test distributions.
import {
  controllabilityGrid,
  evaluateSession,
  writeResults,
  type ControllabilityGrid,
} from '../../longtail/index.js';
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand } from '../command.js';
import { numberArg } from '../args.js';
import {
  CHECKPOINT_OPTIONS,
  controllabilityTable,
  distributionTable,
  jsonGroup,
  loadRunForEvaluation,
} from './longtail-common.js';

const HELP = `usage: tailor test-all -r CHECKPOINT [-c CONFIG] [--json] [--preference a,b,c] [--save] [--root DIR] [--threads N] [--device D]

Evaluates a checkpoint on the eleven test-agnostic distributions (forward 50/25/10/5/2, uniform,
backward 2/5/10/25/50) drawn from the balanced test set, with the test transform.
--preference (PRL): generate the experts for this preference (no retraining).
--grid STEPS (PRL): also evaluate every preference on the simplex grid with spacing 1/STEPS
  (the controllability table; saved as results.controllability with --save).
--save: also write the results into the run's results.json.
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
    save: { type: 'boolean', default: false },
    grid: { type: 'string' },
  },
  run: async ({ values }) => {
    const { loaded, system } = loadRunForEvaluation(
      { ...values, 'train-config': values['train-config'] ?? values.config },
      HELP,
    );
    const results = await evaluateSession(loaded.session, loaded.checkpoint, loaded.history);
    if (values.grid !== undefined) {
      const steps = numberArg('--grid', values.grid, { integer: true, min: 1, max: 50 })!;
      if (system.kind !== 'prl')
        throw new CliError('--grid applies to PRL checkpoints only (this run has no hypernetwork)');
      results.controllability = await controllabilityGrid(loaded.session, steps);
    }
    if (values.save) writeResults(loaded.runDir, results);
    if (values.json) {
      const distributions = Object.fromEntries(
        Object.entries(results.distributions).map(([k, v]) => [k, jsonGroup(v)]),
      );
      console.log(
        JSON.stringify({
          distributions,
          mean_top1: results.mean_top1,
          ...(results.experts_per_image !== undefined
            ? { experts_per_image: results.experts_per_image }
            : {}),
          ...(system.kind === 'prl' ? { preference: system.preference.weights } : {}),
          ...(results.controllability ? { controllability: results.controllability } : {}),
        }),
      );
    } else {
      console.log(
        `${loaded.checkpoint}${system.kind === 'prl' ? ` (preference ${system.preference.weights.map((v) => v.toFixed(3)).join(', ')})` : ''}`,
      );
      console.log(distributionTable(results.distributions, results.mean_top1));
      if (results.experts_per_image !== undefined)
        console.log(`experts per image (routed, uniform test set): ${results.experts_per_image.toFixed(3)}`);
      if (results.controllability)
        console.log(controllabilityTable(results.controllability as ControllabilityGrid));
    }
    return 0;
  },
});
