// Per-op overhead of a tiny op, layer by layer, against PyTorch: a 1-element add through the raw
// native call, through the Tensor API outside any scope (the resnet32 bench's loop) and inside a
// tidy scope. Usage: npm run bench -- tinyop [--json] [--reps 15] [--n 50000]
// Each figure is the best of --reps rounds of --n calls, in process CPU time (user + system),
// not wall time: on a shared machine other processes inflate wall time but not our CPU time.
import './lib/user-errors.js';
import { CliError } from '../src/cli/errors.js';
import { count } from './lib/options.js';
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import * as torch from '../src/torch/index.js';
import { aten } from '../src/torch/index.js';
import { native } from '../src/torch/native.js';

const { values } = parseArgs({
  options: {
    json: { type: 'boolean', default: false },
    reps: { type: 'string', default: '15' },
    n: { type: 'string', default: '50000' },
  },
});
const reps = count('reps', values.reps);
const n = count('n', values.n);
torch.setNumThreads(2);

const a = torch.keep(torch.ones([1]));
const b = torch.keep(torch.ones([1]));
const op = native.resolve('aten::add', 'Tensor');
const boxed = native.resolve('aten::add', 'Tensor', true);
const layers: Record<string, () => void> = {
  native_call_us: () => {
    for (let i = 0; i < n; i++) native.dispose(native.call(op, a.handle, b.handle) as number);
  },
  native_call_boxed_us: () => {
    for (let i = 0; i < n; i++) native.dispose(native.call(boxed, a.handle, b.handle) as number);
  },
  tensor_unscoped_us: () => {
    for (let i = 0; i < n; i++) aten.add_Tensor(a, b).dispose();
  },
  tensor_in_tidy_us: () =>
    torch.tidy(() => {
      for (let i = 0; i < n; i++) aten.add_Tensor(a, b).dispose();
    }),
};
const best: Record<string, number> = {};
for (let r = 0; r < reps; r++) {
  for (const [name, fn] of Object.entries(layers)) {
    const start = process.cpuUsage();
    fn();
    const used = process.cpuUsage(start);
    best[name] = Math.min(best[name] ?? Infinity, (used.user + used.system) / n);
  }
}

const py = `
import time, torch
torch.set_num_threads(2)
a, b = torch.ones(1), torch.ones(1)
best = float("inf")
for _ in range(${reps}):
    t0 = time.process_time()
    for _ in range(${n}):
        torch.add(a, b)
    best = min(best, (time.process_time() - t0) / ${n} * 1e6)
print(best)
`;
const env = { ...process.env };
delete env.LD_PRELOAD;
const ref = spawnSync('/usr/bin/python3', ['-c', py], { encoding: 'utf8', env });
if (ref.status !== 0) throw new CliError(`PyTorch reference failed: ${ref.stderr}`);
const torchUs = Number(ref.stdout.trim());
const result = { ...best, torch_us: torchUs, ratio: best.tensor_unscoped_us! / torchUs, reps, n };
if (values.json) console.log(JSON.stringify(result));
else {
  for (const [name, us] of Object.entries(best)) console.log(`${name.padEnd(22)} ${us.toFixed(3)}`);
  console.log(`${'torch_us'.padEnd(22)} ${torchUs.toFixed(3)}`);
  console.log(`tensor_unscoped / torch: ${result.ratio.toFixed(2)}`);
}
