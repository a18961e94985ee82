// The warnings `tailor train` prints under its description line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyClassesWarning } from '../../src/cli/commands/train.js';
import type { TrainConfig } from '../../src/longtail/config/config.js';
import type { Session } from '../../src/longtail/index.js';

function sessionWith(trainCounts: number[], lists?: { train: string }): Session {
  return { data: { trainCounts, ...(lists ? { lists } : {}) } } as unknown as Session;
}
const config = (numClasses: number) => ({ arch: { args: { num_classes: numClasses } } }) as TrainConfig;

test('train warns when classes of the model have no training image (a list with fewer classes than num_classes)', () => {
  assert.equal(emptyClassesWarning(config(3), sessionWith([4, 2, 1])), null);
  const line = emptyClassesWarning(config(6), sessionWith([20, 15, 2, 0, 0, 0], { train: '/d/train.txt' }));
  assert.equal(
    line,
    'tailor train: warning: 3 of the 6 classes (arch.args.num_classes 6) have no training image in /d/train.txt; ' +
      'if the data has only 3 classes, set arch.args.num_classes to 3 (labels 0 .. 2)',
  );
  // labels in use that are not 0 .. k - 1: no num_classes to suggest, the first empty label instead
  assert.match(
    emptyClassesWarning(config(4), sessionWith([3, 0, 2, 0]))!,
    /2 of the 4 classes \(arch.args.num_classes 4\) have no training image; the first is label 1$/,
  );
});
