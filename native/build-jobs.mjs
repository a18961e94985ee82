#!/usr/bin/env node
// How many translation units the addon's build compiles at once: one per core, but no more
// than the memory allows (each libtorch translation unit takes about 0.6 GB in g++, so 1 GB is
// budgeted per job), and at least one. On a shared two-core machine the nine units took 68 s one
// after another and 51 s two at a time.
// Usage: node native/build-jobs.mjs (prints the number), or import { buildJobs }.
import { availableParallelism, freemem } from 'node:os';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const GIB = 1024 ** 3;

/** Bytes of memory available for new processes (MemAvailable; the free memory elsewhere). */
function availableMemory() {
  try {
    const line = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (line) return Number(line[1]) * 1024;
  } catch {
    // not Linux: os.freemem() below
  }
  return freemem();
}

/** The job count for node-gyp's --jobs. */
export function buildJobs() {
  const byMemory = Math.floor(availableMemory() / GIB);
  return Math.max(1, Math.min(availableParallelism(), byMemory));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(`${buildJobs()}\n`);
