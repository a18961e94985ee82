// Image-list pipeline throughput (the pipeline part; the training part needs a GPU, see
// bench/images_train_torch.py): one epoch of a JPEG list through tailor's image-list loader
// (decode, RandomResizedCrop 224, flip, colour jitter 0.4, normalize) against a PyTorch
// DataLoader with the same transforms and the same number of workers (bench/images_torch.py:
// torchvision where installed, else the same transforms in PIL + torch), in images per second.
//
//   npm run bench -- images [--json] [--workers 1,2,4,8,16] [--root DIR --list FILE]
//                           [--batch 128] [--size 224] [--images N] [--repeats 2] [--fresh-buffers]
//                           [--randaugm]
//
// --randaugm also times BalPoE's long-training pipeline (`randaugm: true`, aug_plus): tailor's
// loader with the spec training builds for it (RandomResizedCrop 0.08-1, flip, jitter 0.4, then
// RandAugment 'rand-n2-m10-mstd0.5'), the PyTorch side with torchvision's transforms and
// BalPoE's RandAugment (bench/images_torch.py --randaugm). Both pipelines run on both sides,
// alternating, so that each row pair says what RandAugment costs per image (CPU milliseconds).
//
// tailor's loader builds each batch into the buffer of a batch already consumed, as in training
// (recycleBuffers); --fresh-buffers also times it allocating every batch anew (TAILOR_RECYCLE=0),
// the `tailor_fresh_*` fields: what recycling is worth on the machine's cores.
//
// Without --root, a synthetic ImageNet-LT-shaped set (tailor data synth-images: photo-sized
// JPEGs, quality 90; 468 images, or at least --images N) is written once into the temp
// directory. Worker counts above the cores are left out. Each case runs in a process of its
// own; tailor's runs get UV_THREADPOOL_SIZE = workers, so that both sides decode on as many
// threads as they have workers. Wall time on a shared machine measures the neighbours too, so
// the CPU seconds of each run (all its threads, or the Python process and its workers) are
// reported beside it.
import './lib/user-errors.js';
import { choice, count, counts, number } from './lib/options.js';
import { CliError } from '../src/cli/errors.js';
import { spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { synthImageSet } from './lib/images-data.js';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'driver' },
    root: { type: 'string' },
    list: { type: 'string' },
    workers: { type: 'string' },
    batch: { type: 'string', default: '128' },
    size: { type: 'string', default: '224' },
    images: { type: 'string', default: '0' },
    repeats: { type: 'string', default: '2' },
    python: { type: 'string', default: '/usr/bin/python3' },
    json: { type: 'boolean', default: false },
    'fresh-buffers': { type: 'boolean', default: false },
    randaugm: { type: 'boolean', default: false },
  },
});
const role = choice('role', values.role!, ['driver', 'child'] as const);
if (values.list !== undefined && values.root === undefined)
  throw new CliError('--list needs --root (the directory its paths are relative to)');
const batch = count('batch', values.batch!);
const size = count('size', values.size!);
// 0: every image of the list (or the synthetic set's default size)
const imagesWanted = number('images', values.images!, { integer: true, min: 0 });
const repeats = count('repeats', values.repeats!);

interface Run {
  images: number;
  seconds: number;
  images_per_s: number;
  cpu_seconds: number;
  impl?: string;
  /** tailor's side: whether its loader's spec had RandAugment. */
  randaugment?: boolean;
}

/** Child: one epoch of tailor's loader with --workers worker threads; prints a Run. */
async function child(): Promise<void> {
  const { readImageList } = await import('../src/longtail/data/imagelist.js');
  const { ImageListLoader, listSource } = await import('../src/longtail/data/imagelist-loader.js');
  if (!values.root || !values.list) throw new CliError('--role child needs --root and --list');
  const list = readImageList(values.root, values.list);
  const max = imagesWanted;
  const source = listSource(max > 0 ? { ...list, entries: list.entries.slice(0, max) } : list);
  const workers = count('workers', values.workers!);
  // a training process has libtorch loaded before its loader starts; so has this one (the JPEG
  // decoder is in the addon; TAILOR_JPEG=0 decodes with sharp instead)
  const decoder =
    process.env.TAILOR_JPEG === '0'
      ? 'sharp'
      : (await import('../src/torch/io.js')).jpegDecoder().available
        ? 'libjpeg-turbo'
        : 'sharp';
  // with --randaugm the spec of a `randaugm: true` experiment (src/longtail/config/experiment.ts)
  const spec = {
    stage: 'train',
    kind: 'imagenet',
    size,
    ...(values.randaugm ? { randAugment: true } : {}),
  } as const;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  // the loader (and its worker threads) start inside the timing, as the DataLoader's workers do
  const loader = new ImageListLoader(source, {
    spec,
    workers,
    prefetch: 2 * Math.max(1, workers),
    // as in training, where each batch is copied into a tensor before the next is asked for
    recycleBuffers: process.env.TAILOR_RECYCLE !== '0',
  });
  let n = 0;
  for await (const b of loader.epoch({ batchSize: batch, seed: 0 })) n += b.n;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  await loader.close();
  const cpu = process.cpuUsage(c0);
  const run: Run = {
    images: n,
    seconds,
    images_per_s: n / seconds,
    cpu_seconds: (cpu.user + cpu.system) / 1e6,
    impl: decoder,
    randaugment: 'randAugment' in spec && spec.randAugment,
  };
  console.log(JSON.stringify(run));
}

async function ensureData(): Promise<{ root: string; list: string }> {
  if (values.root) {
    const list = values.list ?? join(values.root, 'ImageNet_LT_train.txt');
    return { root: values.root, list };
  }
  return synthImageSet({ images: imagesWanted, log: values.json ? undefined : console.log });
}

function parseRun(out: string | null, err: string | null, what: string): Run {
  const line = (out ?? '').trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Run;
  } catch {
    throw new CliError(
      `${what} gave no result${what === 'PyTorch' ? ` (--python '${values.python!}' needs torch)` : ''}:\n${out ?? ''}\n${err ?? ''}`,
    );
  }
}

async function driver(): Promise<void> {
  const cores = availableParallelism();
  const requested = values.workers ? counts('workers', values.workers) : [1, 2, 4, 8, 16];
  const workerCounts = requested.filter((w) => w <= cores);
  const skipped = requested.filter((w) => !workerCounts.includes(w));
  const { root, list } = await ensureData();
  const self = fileURLToPath(import.meta.url);
  const common = ['--root', root, '--list', list, '--batch', String(batch), '--size', String(size)];
  const rows: Row[] = [];
  const tailorRun = (w: number, recycle: boolean, randaugm: boolean): Run => {
    const t = spawnSync(
      process.execPath,
      [
        self,
        ...['--role', 'child', '--workers', String(w), '--images', String(imagesWanted), ...common],
        ...(randaugm ? ['--randaugm'] : []),
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, UV_THREADPOOL_SIZE: String(w), TAILOR_RECYCLE: recycle ? '1' : '0' },
      },
    );
    return parseRun(t.stdout, t.stderr, 'tailor');
  };
  const torchRun = (w: number, randaugm: boolean): Run => {
    const script = join(self, '..', '..', '..', 'bench', 'images_torch.py');
    const args = [script, root, list, String(w), String(batch), String(size), String(imagesWanted)];
    const py = spawnSync(values.python!, [...args, ...(randaugm ? ['--randaugm'] : [])], {
      encoding: 'utf8',
      env: { ...process.env, OMP_NUM_THREADS: '1' },
    });
    return parseRun(py.stdout, py.stderr, 'PyTorch');
  };
  // the plain pipeline, and with --randaugm BalPoE's as well
  const pipelines = values.randaugm ? [false, true] : [false];
  for (const w of workerCounts) {
    const best = pipelines.map(() => ({}) as { tailor?: Run; fresh?: Run; torch?: Run });
    const keep = (k: 'tailor' | 'fresh' | 'torch', p: number, run: Run) => {
      const b = best[p]!;
      if (!b[k] || run.seconds < b[k].seconds) b[k] = run;
    };
    // alternate the sides (and the pipelines); keep the best (least disturbed) run of each
    for (let r = 0; r < repeats; r++) {
      for (const [p, randaugm] of pipelines.entries()) {
        keep('tailor', p, tailorRun(w, process.env.TAILOR_RECYCLE !== '0', randaugm));
        if (values['fresh-buffers']) keep('fresh', p, tailorRun(w, false, randaugm));
        keep('torch', p, torchRun(w, randaugm));
      }
    }
    for (const [p, randaugm] of pipelines.entries()) {
      const { tailor, fresh, torch } = best[p]!;
      rows.push(row(w, randaugm, tailor!, torch!, fresh));
    }
  }
  // what RandAugment adds per image: CPU milliseconds of the best runs, BalPoE's pipeline less
  // the plain one, on each side
  const cost: Cost[] | undefined = values.randaugm
    ? workerCounts.map((w) => {
        const [plain, ra] = [false, true].map((x) =>
          rows.find((r) => r.workers === w && r.randaugm === x)!,
        ) as [Row, Row];
        const ms = (r: Row, side: 'tailor' | 'torch') => 1000 / r[`${side}_images_per_cpu_s`];
        return {
          workers: w,
          tailor_cpu_ms_per_image: ms(ra, 'tailor') - ms(plain, 'tailor'),
          torch_cpu_ms_per_image: ms(ra, 'torch') - ms(plain, 'torch'),
        };
      })
    : undefined;
  const result = {
    bench: 'images',
    cores,
    load_average: loadavg()[0],
    batch,
    size,
    data: list,
    rows,
    ...(cost ? { randaugment_cost: cost } : {}),
    // the requested counts left out (above the cores), so that an empty table says why
    ...(skipped.length > 0 ? { skipped_workers: skipped } : {}),
    // (b), training images/s of the SADE ImageNet-LT ResNeXt-50, needs a GPU
    training: {
      measured: false,
      how: 'on the GPU machine: GPU_CHECKS=images_train_torch,images_train_tailor scripts/gpu-check.sh (bench/images_train_torch.py and bench/images-train.ts)',
    },
  };
  if (values.json) {
    console.log(JSON.stringify(result));
    return;
  }
  print(result, list, skipped, cores);
}

/** What RandAugment adds per image at one worker count, in CPU milliseconds. */
interface Cost {
  workers: number;
  tailor_cpu_ms_per_image: number;
  torch_cpu_ms_per_image: number;
}

/** One row of the table: the best runs of both sides at one worker count and pipeline. */
interface Row {
  workers: number;
  randaugm: boolean;
  images: number;
  tailor_images_per_s: number;
  torch_images_per_s: number;
  ratio: number;
  tailor_images_per_cpu_s: number;
  torch_images_per_cpu_s: number;
  torch_impl?: string;
  tailor_decoder?: string;
  /** Whether tailor's loader ran RandAugment (its child's report). */
  tailor_randaugment: boolean;
  tailor_fresh_images_per_s?: number;
  tailor_fresh_images_per_cpu_s?: number;
}

function row(w: number, randaugm: boolean, tailor: Run, torch: Run, fresh: Run | undefined): Row {
  return {
    workers: w,
    randaugm,
    images: tailor.images,
    tailor_images_per_s: tailor.images_per_s,
    torch_images_per_s: torch.images_per_s,
    ratio: tailor.images_per_s / torch.images_per_s,
    tailor_images_per_cpu_s: tailor.images / tailor.cpu_seconds,
    torch_images_per_cpu_s: torch.images / torch.cpu_seconds,
    torch_impl: torch.impl,
    tailor_decoder: tailor.impl,
    tailor_randaugment: tailor.randaugment === true,
    ...(fresh
      ? {
          tailor_fresh_images_per_s: fresh.images_per_s,
          tailor_fresh_images_per_cpu_s: fresh.images / fresh.cpu_seconds,
        }
      : {}),
  };
}

/** The human-readable table. */
function print(
  result: { batch: number; size: number; rows: Row[]; randaugment_cost?: Cost[] },
  list: string,
  skipped: number[],
  cores: number,
): void {
  const { rows } = result;
  const ra = result.randaugment_cost !== undefined;
  console.log(`image-list pipeline, ${cores} cores, batch ${result.batch}, crop ${result.size} (${list})`);
  if (skipped.length > 0) console.log(`  left out: ${skipped.join(', ')} workers (above the ${cores} cores)`);
  console.log(
    `workers  ${ra ? 'pipeline   ' : ''}images  tailor img/s  torch img/s  ratio  tailor img/cpu-s  torch img/cpu-s`,
  );
  for (const r of rows) {
    console.log(
      `${String(r.workers).padStart(7)}  ${ra ? (r.randaugm ? 'randaugm' : 'plain').padEnd(11) : ''}` +
        `${String(r.images).padStart(6)}  ${r.tailor_images_per_s.toFixed(1).padStart(12)}  ` +
        `${r.torch_images_per_s.toFixed(1).padStart(11)}  ${r.ratio.toFixed(2).padStart(5)}  ` +
        `${r.tailor_images_per_cpu_s.toFixed(1).padStart(16)}  ${r.torch_images_per_cpu_s.toFixed(1).padStart(15)}`,
    );
  }
  for (const impl of new Set(rows.map((r) => r.torch_impl))) console.log(`PyTorch side: ${impl}`);
  for (const c of result.randaugment_cost ?? []) {
    console.log(
      `${c.workers} workers, RandAugment per image: tailor +${c.tailor_cpu_ms_per_image.toFixed(2)} CPU-ms, ` +
        `torch +${c.torch_cpu_ms_per_image.toFixed(2)} CPU-ms`,
    );
  }
  for (const r of rows) {
    if (r.tailor_fresh_images_per_s === undefined) continue;
    console.log(
      `${r.workers} workers${ra ? ` (${r.randaugm ? 'randaugm' : 'plain'})` : ''}, every batch allocated anew: ` +
        `${r.tailor_fresh_images_per_s.toFixed(1)} img/s, ` +
        `${r.tailor_fresh_images_per_cpu_s!.toFixed(1)} img/cpu-s (recycled: ${r.tailor_images_per_s.toFixed(1)}, ` +
        `${r.tailor_images_per_cpu_s.toFixed(1)})`,
    );
  }
}

await (role === 'child' ? child() : driver());
