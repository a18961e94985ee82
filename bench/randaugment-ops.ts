// What each RandAugment operation costs, tailor against Pillow: every operation of BalPoE's recipe
// (rand-n2-m10, `src/longtail/data/randaugment.ts`) at magnitude 10 on the same 224 x 224 RGB
// image, the geometric ones with both filters, in CPU-milliseconds per call on one thread. tailor's
// operations equal Pillow 9.4's pixel for pixel (test/longtail/randaugment.test.ts); Pillow's side
// is bench/randaugment_ops.py, calling Pillow as scripts/golden/randaugment.py does. tailor's
// figure is the image-list loader's way, writing into a buffer reused from call to call; the
// column beside it allocates a new image per call, as Pillow does.
//
//   npm run bench -- randaugment-ops [--calls 200] [--json] [--python /usr/bin/python3]
import './lib/user-errors.js';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { count } from './lib/options.js';
import { CliError } from '../src/cli/errors.js';
import {
  BALPOE_RAND_AUGMENT,
  RAND_AUGMENT_GEOMETRIC,
  RAND_AUGMENT_OPS,
  applyRandAugmentOp,
} from '../src/longtail/data/randaugment.js';
import type { ByteImage } from '../src/longtail/data/pil-ops.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '200' },
    python: { type: 'string', default: '/usr/bin/python3' },
    json: { type: 'boolean', default: false },
  },
});
const calls = count('calls', values.calls!);

/** The image of bench/randaugment_ops.py, channel-major: smooth ramps with a hashed texture. */
function benchImage(size = 224): ByteImage {
  const data = new Uint8Array(3 * size * size);
  for (let c = 0; c < 3; c++)
    for (let y = 0; y < size; y++)
      for (let x = 0; x < size; x++)
        data[(c * size + y) * size + x] = (x * 7 + y * 13 + c * 50 + ((x * y) % 31)) % 256;
  return { data, h: size, w: size };
}

/** CPU-ms per call of `run` (after a warm-up of a tenth of the calls). */
function cpuMsPerCall(run: () => void): number {
  for (let i = 0; i < Math.max(3, Math.floor(calls / 10)); i++) run();
  const t0 = process.cpuUsage();
  for (let i = 0; i < calls; i++) run();
  const used = process.cpuUsage(t0);
  return (used.user + used.system) / 1000 / calls;
}

/**
 * CPU-ms per call of each operation (and filter) on tailor's side: writing into a reused buffer,
 * as the image-list loader runs them, and into a new image per call, as Pillow does.
 */
function tailorSide(): Record<string, { reused: number; fresh: number }> {
  const img = benchImage();
  const into = new Uint8Array(img.data.length);
  const out: Record<string, { reused: number; fresh: number }> = {};
  for (const op of RAND_AUGMENT_OPS) {
    const filters = RAND_AUGMENT_GEOMETRIC.has(op)
      ? (['bilinear', 'bicubic'] as const)
      : (['bilinear'] as const);
    for (const resample of filters) {
      const draw = { op, fired: true, magnitude: 10, sign: 1 as const, resample };
      out[RAND_AUGMENT_GEOMETRIC.has(op) ? `${op}/${resample}` : op] = {
        reused: cpuMsPerCall(() => applyRandAugmentOp(img, draw, BALPOE_RAND_AUGMENT, into)),
        fresh: cpuMsPerCall(() => applyRandAugmentOp(img, draw)),
      };
    }
  }
  return out;
}

function pillowSide(): Record<string, number> {
  const script = join(fileURLToPath(new URL('../..', import.meta.url)), 'bench', 'randaugment_ops.py');
  const r = spawnSync(values.python!, [script, String(calls)], { encoding: 'utf8' });
  if (r.status !== 0)
    throw new CliError(
      `${values.python} ${script} failed (${(r.stderr || r.error?.message || '').trim().split('\n').pop()}); it needs Pillow and numpy (Debian's python3-pil, python3-numpy)`,
    );
  return JSON.parse(r.stdout) as Record<string, number>;
}

const tailor = tailorSide();
const pillow = pillowSide();
const rows = Object.keys(tailor).map((key) => ({
  op: key,
  tailor_ms: tailor[key]!.reused,
  tailor_fresh_ms: tailor[key]!.fresh,
  pillow_ms: pillow[key] ?? NaN,
  ratio: tailor[key]!.reused / (pillow[key] ?? NaN),
}));
if (values.json) console.log(JSON.stringify({ calls, rows }));
else {
  console.log(
    '| operation | tailor CPU-ms | tailor CPU-ms, new image per call | Pillow CPU-ms | tailor / Pillow |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const r of rows)
    console.log(
      `| ${r.op} | ${r.tailor_ms.toFixed(3)} | ${r.tailor_fresh_ms.toFixed(3)} | ${r.pillow_ms.toFixed(3)} | ${r.ratio.toFixed(2)} |`,
    );
}
