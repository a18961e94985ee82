// Denoising throughput of the NMR U-Net (src/nmr/model/unet.ts) in no-grad float32 inference,
// next to the same network in PyTorch (bench/nmr_unet_torch.py, run with /usr/bin/python3 when
// --torch is given), and the FLOPs per spectrum that bound it.
//   npm run bench -- nmr-unet [--points 32768] [--threads 2] [--batch 4] [--reps 2]
//                             [--channels 64,128,256,256] [--kernel 9] [--levels 1] [--torch]
// Both ways of computing the dilated convolutions (direct, polyphase) are timed on the same
// weights, one after the other; on a shared machine compare numbers of one run only.
import './lib/user-errors.js';
import { count, counts } from './lib/options.js';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import * as torch from '../src/torch/index.js';
import { UNet1d, unetFlops } from '../src/nmr/model/unet.js';

const { values } = parseArgs({
  options: {
    points: { type: 'string', default: '32768' },
    threads: { type: 'string', default: '2' },
    batch: { type: 'string', default: '4' },
    reps: { type: 'string', default: '2' },
    channels: { type: 'string', default: '64,128,256,256' },
    kernel: { type: 'string', default: '9' },
    levels: { type: 'string', default: '1' },
    torch: { type: 'boolean', default: false },
  },
});
const points = count('points', values.points);
const threads = count('threads', values.threads);
const batch = count('batch', values.batch);
const reps = count('reps', values.reps);
const channels = counts('channels', values.channels);
const kernel = count('kernel', values.kernel);
const inputLevels = count('levels', values.levels);
torch.setNumThreads(threads);
torch.manualSeed(0);
const dilations = channels.map((_, i) => 2 ** Math.min(i, 3));
const models = (['direct', 'polyphase'] as const).map((conv) => {
  const m = new UNet1d({ channels, kernel, dilations, conv, inputLevels });
  return m.eval();
});
models[1]!.loadStateDict(models[0]!.stateDict());
const x = torch.randn([batch, inputLevels, points]);
const gflop = unetFlops(models[0]!.config, points) / 1e9;
console.log(
  `${points}-point spectra, ${threads} threads, batch ${batch} (${cpus()[0]?.model}, load ${loadavg()[0]!.toFixed(1)}); ` +
    `${models[0]!.numParameters().toLocaleString('en-US')} parameters, ${gflop.toFixed(2)} GFLOP per spectrum`,
);
for (const model of models) {
  const run = (): void => torch.noGrad(() => torch.tidy(() => void model.forward(x).toFloat32Array()));
  run(); // warm-up
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < reps; r++) run();
  const perSecond = batch / ((performance.now() - t0) / 1000 / reps);
  // CPU seconds (all threads) per spectrum: on a shared machine a steadier measure of the work
  // than wall time; with the machine to itself, wall time would be about this / threads.
  const cpu = process.cpuUsage(cpu0);
  const cpuPerSpectrum = (cpu.user + cpu.system) / 1e6 / (reps * batch);
  console.log(
    `tailor  U-Net ${channels.join('-')} k=${kernel} conv=${model.config.conv}: ${perSecond.toFixed(2)} spectra/s ` +
      `(${(gflop * perSecond).toFixed(1)} GFLOP/s), ${cpuPerSpectrum.toFixed(2)} CPU s per spectrum`,
  );
}
if (values.torch) {
  const script = fileURLToPath(new URL('../../bench/nmr_unet_torch.py', import.meta.url));
  const r = spawnSync(
    '/usr/bin/python3',
    [
      script,
      String(points),
      String(threads),
      String(batch),
      String(reps),
      values.channels,
      String(kernel),
      String(inputLevels),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) console.log(`pytorch run failed: ${r.stderr}`);
  for (const line of r.stdout.trim().split('\n').filter(Boolean)) {
    const j = JSON.parse(line) as { mode: string; spectra_per_s: number; cpu_s_per_spectrum: number };
    console.log(
      `pytorch U-Net ${channels.join('-')} k=${kernel} conv=${j.mode}: ${j.spectra_per_s.toFixed(2)} spectra/s ` +
        `(${(gflop * j.spectra_per_s).toFixed(1)} GFLOP/s), ${j.cpu_s_per_spectrum.toFixed(2)} CPU s per spectrum`,
    );
  }
}
torch.dispose([x]);
for (const m of models) m.dispose();
