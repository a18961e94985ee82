#!/usr/bin/env node
// The package's `install` script: builds the libtorch addon when tailor is installed as a
// dependency, against the libtorch TAILOR_LIBTORCH selects (see resolve-libtorch.mjs; Debian's
// libtorch-dev by default), with the node-gyp npm runs install scripts with. It never fails the
// install: without libtorch or a C++ toolchain it prints one message naming what to install or
// set, and the parts of tailor that need no tensors (tailor/mixture, NMR reading and processing,
// the reports) keep working; a tensor operation then throws EngineUnavailableError, which says
// to run `npm rebuild tailor` once the prerequisites are there.
//
// Skipped in a repository checkout (there ./scripts/setup.sh builds the addon, after `npm ci`)
// and when TAILOR_SKIP_BUILD=1.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildJobs } from './build-jobs.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = dirname(here);
const log = join(here, 'build', 'install.log');
const status = join(here, 'build', 'install-status.txt');

function say(line) {
  process.stderr.write(`tailor: ${line}\n`);
}

const DEBIAN = "Debian/Ubuntu: 'apt install libtorch-dev g++ make python3'";
const REBUILD = "then run 'npm rebuild tailor'";

/**
 * Ends the script without failing the install. npm shows a dependency's install output only when
 * it fails, so the reason is also kept in build/install-status.txt, where the EngineUnavailableError
 * of a later tensor operation reads it.
 */
function giveUp(what, remedy) {
  const line = `the libtorch engine was not built at install (${what}); to build it: ${remedy}, ${REBUILD}`;
  say(`${line}. tailor/mixture and NMR reading work without it, tensors do not.`);
  try {
    mkdirSync(dirname(status), { recursive: true });
    writeFileSync(status, `${line}\n`);
  } catch {
    // a read-only install: the message above is all there is
  }
  process.exit(0);
}

function has(command, args = ['--version']) {
  try {
    execFileSync(command, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (existsSync(join(root, 'src', 'torch', 'native.ts'))) {
  // A repository checkout: `npm ci` runs this too; ./scripts/setup.sh builds the addon itself.
  process.exit(0);
}
if (process.env.TAILOR_SKIP_BUILD && process.env.TAILOR_SKIP_BUILD !== '0') {
  say('TAILOR_SKIP_BUILD is set: the libtorch engine was not built (npm rebuild tailor builds it)');
  process.exit(0);
}

// The libtorch, as binding.gyp will see it.
let resolved;
try {
  const { resolveLibtorch } = await import('./resolve-libtorch.mjs');
  resolved = resolveLibtorch(process.env.TAILOR_LIBTORCH ?? '');
} catch (error) {
  const sel = process.env.TAILOR_LIBTORCH;
  giveUp(
    sel ? error.message : "no libtorch found: Debian's libtorch-dev is not installed",
    `install libtorch (${DEBIAN}) or set TAILOR_LIBTORCH to python:/path/to/python3 (an installed PyTorch) or an unpacked libtorch directory`,
  );
}

// The toolchain node-gyp needs.
const missing = [];
if (!has(process.env.CXX ?? 'g++') && !has('c++')) missing.push('a C++ compiler (g++)');
if (!has('make')) missing.push('make');
if (!has('python3')) missing.push('python3');
if (missing.length > 0) giveUp(`${missing.join(', ')} missing`, `install them (${DEBIAN})`);

// Node's headers: those of the running node (official builds and Debian's ship them), so that
// node-gyp needs no download.
const nodedir = [dirname(dirname(process.execPath)), '/usr'].find((d) =>
  existsSync(join(d, 'include', 'node', 'node_api.h')),
);
// npm runs install scripts with its bundled node-gyp on PATH and in npm_config_node_gyp.
const gyp = process.env.npm_config_node_gyp;
const [cmd, args] = gyp && existsSync(gyp) ? [process.execPath, [gyp]] : ['node-gyp', []];
args.push('rebuild', '--directory', here, '--jobs', String(buildJobs()));
if (nodedir) args.push(`--nodedir=${nodedir}`);

say(
  `building the libtorch engine against libtorch ${resolved.version} (${resolved.libDir}); this takes a few minutes`,
);
mkdirSync(dirname(log), { recursive: true });
rmSync(join(here, '.libtorch-cache.json'), { force: true });
rmSync(status, { force: true });
const run = spawnSync(cmd, args, { cwd: here, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
if (run.error || run.status !== 0) {
  mkdirSync(dirname(log), { recursive: true });
  writeFileSync(log, `${run.stdout ?? ''}\n${run.stderr ?? ''}\n${run.error ? String(run.error) : ''}\n`);
  giveUp(
    `node-gyp failed${run.error ? `: ${run.error.message}` : ''}; its output is in ${log}`,
    `check that libtorch ${resolved.version} and its headers are complete (${DEBIAN}, or TAILOR_LIBTORCH)`,
  );
}
// The resolution beside the build, as ./scripts/setup.sh records it (error messages and
// `tailor version` name the libtorch from it).
writeFileSync(join(here, 'build', 'libtorch.json.tmp'), `${JSON.stringify(resolved, null, 1)}\n`);
renameSync(join(here, 'build', 'libtorch.json.tmp'), join(here, 'build', 'libtorch.json'));
say(`built the libtorch engine (${join(here, 'build', 'Release', 'tailor_native.node')})`);
