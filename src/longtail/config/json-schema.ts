// JSON Schemas of the config files, generated from the zod schemas that check them, so an editor
// completes and checks a config the way `tailor` will (configs/schema/, `npm run schemas`).
import { z } from 'zod';
import { TRAIN_CONFIG } from './train-schema.js';
import { TEST_TIME_CONFIG } from './testtime.js';

/** The published schemas by file name (under configs/schema/). */
export function configJsonSchemas(): Record<string, unknown> {
  // io 'input': what a file may contain (fields filled in by defaults stay optional)
  const schema = (s: z.ZodType, title: string) => ({
    ...z.toJSONSchema(s, { io: 'input', target: 'draft-2020-12' }),
    title,
  });
  return {
    'train.schema.json': schema(TRAIN_CONFIG, 'tailor long-tail training config'),
    'test-time.schema.json': schema(TEST_TIME_CONFIG, 'tailor test-time config'),
  };
}
