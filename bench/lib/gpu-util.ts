// GPU utilisation while a benchmark's timed loop runs: a background shell loop calls nvidia-smi
// every 0.2 s and appends to a file, so the samples keep coming while the loop blocks Node's event
// loop, and none is lost when the sampler stops (each sample is its own nvidia-smi call). Where
// nvidia-smi is missing the sampler is a no-op and reports null.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The GPU's utilisation.gpu (% of time a kernel ran) over a timed section. */
export interface GpuUtil {
  mean_percent: number;
  samples: number;
}

/** Starts sampling GPU `index`; stop() ends it and returns the mean (null: no nvidia-smi or no sample). */
export function startGpuUtil(index = 0): { stop(): GpuUtil | null } {
  if (spawnSync('nvidia-smi', ['-L'], { stdio: 'ignore' }).status !== 0) return { stop: () => null };
  const dir = mkdtempSync(join(tmpdir(), 'tailor-gpu-util-'));
  const file = join(dir, 'util.txt');
  const query = `nvidia-smi -i ${index} --query-gpu=utilization.gpu --format=csv,noheader,nounits`;
  const loop = spawn('sh', ['-c', `while :; do ${query} >> "${file}"; sleep 0.2; done`], {
    stdio: 'ignore',
    detached: true,
  });
  return {
    stop(): GpuUtil | null {
      try {
        process.kill(-loop.pid!, 'SIGTERM');
      } catch {
        // the loop already ended
      }
      const values = existsSync(file)
        ? readFileSync(file, 'utf8')
            .split('\n')
            .filter((line) => line.trim() !== '')
            .map(Number)
            .filter(Number.isFinite)
        : [];
      rmSync(dir, { recursive: true, force: true });
      if (values.length === 0) return null;
      return { mean_percent: values.reduce((a, b) => a + b, 0) / values.length, samples: values.length };
    },
  };
}
