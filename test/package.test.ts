// The package as a user gets it: `npm pack`, the tarball installed into a fresh project (its
// install script building the libtorch addon there), examples/*.ts type-checked against the
// installed types and run from it: the mixture and NMR-reading ones with TAILOR_NO_ENGINE=1, the
// tensor ones with the engine the install built (each group in one process). A second, unbuilt copy checks that an install
// without libtorch or a compiler says so in one line and that tensors then fail with the named
// error. Offline: the dependencies come from the npm cache (`npm ci --offline` with a lockfile
// made from the repository's), or, when the cache lacks them, are linked from the repository's
// node_modules. About a minute, most of it compiling the addon.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './helpers.js';

interface Pkg {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  bin: Record<string, string>;
}
interface LockEntry {
  dev?: boolean;
  [key: string]: unknown;
}

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as Pkg;
const tsc = join(repoRoot, 'node_modules/typescript/bin/tsc');

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = {},
): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.equal(r.status, 0, `${what} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/** The runtime dependencies of the repository's lockfile, for a project depending on the tarball. */
function projectLock(tarball: string): unknown {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const packages: Record<string, unknown> = {
    '': { name: 'proj', version: '1.0.0', dependencies: { tailor: `file:${tarball}` } },
  };
  for (const [key, entry] of Object.entries(lock.packages))
    if (key !== '' && !entry.dev) packages[key] = entry;
  packages['node_modules/tailor'] = {
    version: pkg.version,
    resolved: `file:${tarball}`,
    hasInstallScript: true,
    dependencies: pkg.dependencies,
    bin: pkg.bin,
  };
  return { name: 'proj', version: '1.0.0', lockfileVersion: 3, requires: true, packages };
}

/** Extracts the tarball to DIR/node_modules/tailor and links the other runtime packages from FROM. */
function linkedInstall(dir: string, tarball: string, from: string): void {
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'tailor'), { recursive: true });
  ok(run('tar', ['xzf', tarball, '-C', join(modules, 'tailor'), '--strip-components=1'], dir), 'tar');
  for (const name of readdirSync(from)) {
    if (name === 'tailor' || name.startsWith('.') || existsSync(join(modules, name))) continue;
    symlinkSync(join(from, name), join(modules, name));
  }
}

test(
  'the packed tarball installs, builds its engine, type-checks and runs the examples',
  { timeout: 600_000 },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'tailor-package-'));
    try {
      // Pack what `files` lists (dist/ is current: the test runner compiled it).
      const packed = ok(
        run('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], repoRoot),
        'npm pack',
      );
      const tarball = join(dir, packed.trim().split('\n').pop()!);
      const listing = ok(run('tar', ['tzf', tarball], dir), 'tar tzf')
        .split('\n')
        .filter(Boolean);
      for (const required of [
        'package/dist/src/index.js',
        'package/dist/src/index.d.ts',
        'package/dist/src/mixture/index.d.ts',
        'package/native/binding.gyp',
        'package/native/install.mjs',
        'package/native/resolve-libtorch.mjs',
        'package/native/resolve-jpeg.mjs',
        'package/native/build-jobs.mjs',
        'package/native/src/addon.cc',
        'package/configs/schema/train.schema.json',
        'package/bin/tailor',
        'package/LICENSE',
      ])
        assert.ok(listing.includes(required), `the tarball lacks ${required}`);
      const strays = listing.filter((f) =>
        /^package\/(dist\/test|dist\/bench|src|test|native\/build)\/|\.map$/.test(f),
      );
      assert.deepEqual(strays, [], 'the tarball carries tests, sources, builds or source maps');

      // A fresh project depending on the tarball; npm runs tailor's install script (the addon build).
      const proj = join(dir, 'proj');
      mkdirSync(proj);
      writeFileSync(
        join(proj, 'package.json'),
        JSON.stringify({
          name: 'proj',
          version: '1.0.0',
          type: 'module',
          private: true,
          dependencies: { tailor: `file:${tarball}` },
        }),
      );
      writeFileSync(join(proj, 'package-lock.json'), JSON.stringify(projectLock(tarball)));
      // TAILOR_PACKAGE_TEST_LINK=1 takes the linked route without trying npm (to test that route).
      const ci = process.env.TAILOR_PACKAGE_TEST_LINK
        ? { status: 1, stdout: '', stderr: 'ENOTCACHED (TAILOR_PACKAGE_TEST_LINK=1)' }
        : run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--foreground-scripts'], proj);
      if (ci.status !== 0) {
        // The npm cache lacks a dependency: the same files, linked from the repository instead, and
        // the install script run as npm would.
        assert.match(ci.stderr, /ENOTCACHED|only-if-cached/, `npm ci failed:\n${ci.stdout}\n${ci.stderr}`);
        rmSync(join(proj, 'node_modules'), { recursive: true, force: true });
        linkedInstall(proj, tarball, join(repoRoot, 'node_modules'));
        ok(
          run(process.execPath, ['native/install.mjs'], join(proj, 'node_modules/tailor'), {
            npm_config_node_gyp: join(repoRoot, 'node_modules/node-gyp/bin/node-gyp.js'),
          }),
          'the install script',
        );
      }
      assert.ok(
        existsSync(join(proj, 'node_modules/tailor/native/build/Release/tailor_native.node')),
        `the install built no addon:\n${ci.stdout}\n${ci.stderr}`,
      );
      // npm links the command into node_modules/.bin; the linked route has only the package's own.
      const bin = [join(proj, 'node_modules/.bin/tailor'), join(proj, 'node_modules/tailor/bin/tailor')].find(
        (p) => existsSync(p),
      )!;
      const version = ok(run(bin, ['version'], proj), 'tailor version');
      assert.match(version, new RegExp(`^tailor ${pkg.version.replace(/\./g, '\\.')}\\nlibtorch \\d`));

      // The examples, compiled against the installed package's types: one tsc run type-checks and
      // emits (a type error makes it exit non-zero even though it still writes the files).
      for (const f of readdirSync(join(repoRoot, 'examples')))
        if (f.endsWith('.ts') || f.endsWith('.csv'))
          copyFileSync(join(repoRoot, 'examples', f), join(proj, f));
      writeFileSync(
        join(proj, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            types: ['node'],
            typeRoots: [join(repoRoot, 'node_modules/@types')],
            outDir: 'out',
            rootDir: '.',
          },
          include: ['*.ts'],
        }),
      );
      ok(
        run(process.execPath, [tsc, '-p', 'tsconfig.json'], proj),
        'type-checking and compiling the examples',
      );
      for (const f of readdirSync(proj))
        if (f.endsWith('.csv')) copyFileSync(join(proj, f), join(proj, 'out', f));
      // The compiled examples, imported one after another by one process per group (a process
      // each would pay Node's and libtorch's start-up each time), each with the argv it has when
      // run alone; a marker line before each splits the output by example.
      const MARK = '\u0000example ';
      writeFileSync(
        join(proj, 'out', 'run-examples.mjs'),
        `import { fileURLToPath } from 'node:url';
const [node, , ...names] = process.argv;
for (const name of names) {
  process.stdout.write(${JSON.stringify(MARK)} + name + '\\n');
  // the argv the example sees when run alone (some read an optional argument)
  const file = fileURLToPath(new URL(\`./\${name}.js\`, import.meta.url));
  process.argv = [node, file];
  await import(file);
}
`,
      );
      const runExamples = (names: string[], env: NodeJS.ProcessEnv = {}): Map<string, string> => {
        const out = ok(
          run(process.execPath, [join('out', 'run-examples.mjs'), ...names], proj, {
            TAILOR_THREADS: '2',
            ...env,
          }),
          `the examples ${names.join(', ')}`,
        );
        const outputs = new Map<string, string>();
        for (const part of out.split(MARK).slice(1)) {
          const end = part.indexOf('\n');
          outputs.set(part.slice(0, end), part.slice(end + 1));
        }
        assert.deepEqual([...outputs.keys()], names, out);
        return outputs;
      };
      const fmnist = existsSync('/usr/share/datasets/fashion-mnist');
      const outputs = new Map([
        ...runExamples(['gaussian-mixture', 'subgroup-lrt', 'nmr-read'], { TAILOR_NO_ENGINE: '1' }),
        // longtail-classify first: its model's initialisation is not seeded (the others seed all
        // they draw), so it draws from a fresh process's state as when run alone
        ...runExamples([
          ...(fmnist ? ['longtail-classify'] : []),
          'custom-cnn',
          'lazy-dataset',
          'grad-cam',
          'nmr-denoise',
          'longtail-own-model',
          'noisy-labels',
        ]),
      ]);
      const example = (name: string): string => outputs.get(name)!;

      assert.match(example('gaussian-mixture'), /best by BIC: K=3[^]*variational mixture: 3 of 8 components/);
      assert.match(example('subgroup-lrt'), /LRT for U2: LR = [\d.]+ on 2 df/);
      assert.match(example('nmr-read'), /strongest peak at 1\.20 ppm/);
      assert.match(example('custom-cnn'), /training accuracy/);
      assert.match(example('lazy-dataset'), /360 file reads; training accuracy \d+\/60/);
      // Hooks, a custom autograd.Function and activation checkpointing in one program: both saliency
      // maps mostly peak on the shape (12/16 and 16/16 when written).
      const cam = example('grad-cam');
      const peaks = (name: string) =>
        Number(cam.match(new RegExp(`${name} peaks on the shape: (\\d+)/16`))?.[1]);
      assert.match(cam, /test accuracy (9\d|100)\.\d%/);
      assert.ok(peaks('Grad-CAM') > 8 && peaks('guided backpropagation') >= 12, cam);
      // Per-example gradients flag mislabelled points (53 of the 60 flagged when written; 6 by chance).
      const flagged = example('noisy-labels').match(/largest gradients: (\d+) mislabelled/);
      assert.ok(flagged && Number(flagged[1]) >= 30, `noisy-labels: ${example('noisy-labels')}`);
      const denoise = example('nmr-denoise').match(/error before: ([\d.]+), after denoising: ([\d.]+)/);
      assert.ok(
        denoise && Number(denoise[2]) < Number(denoise[1]),
        `nmr-denoise did not denoise: ${denoise}`,
      );
      // Trained on long-tailed data, the logit-adjusted loss gets the few-shot classes right more
      // often than plain cross-entropy (0.85 against 0.55 on the balanced test set).
      const ownModel = example('longtail-own-model');
      const fewShot = (name: string) =>
        Number(ownModel.match(new RegExp(`^${name} +[\\d.]+ +[\\d.]+ +([\\d.]+) +[\\d.]+$`, 'm'))?.[1]);
      assert.ok(fewShot('logit-adjusted') > fewShot('cross-entropy') + 0.1, ownModel);
      if (fmnist)
        assert.match(
          example('longtail-classify'),
          /preference 0\.10\/0\.20\/0\.70: \d+\/40 test images right/,
        );

      // An install that cannot build: one message naming what to install or set, and success.
      const bare = join(dir, 'bare');
      linkedInstall(bare, tarball, join(proj, 'node_modules'));
      const pkgDir = join(bare, 'node_modules/tailor');
      const noTorch = run(process.execPath, ['native/install.mjs'], pkgDir, {
        TAILOR_LIBTORCH: join(dir, 'none'),
      });
      assert.equal(noTorch.status, 0, noTorch.stderr);
      assert.equal(noTorch.stderr.trim().split('\n').length, 1, noTorch.stderr);
      assert.match(
        noTorch.stderr,
        /TAILOR_LIBTORCH.*apt install libtorch-dev g\+\+ make python3.*npm rebuild tailor/,
      );
      const emptyPath = join(dir, 'empty-path');
      mkdirSync(emptyPath);
      const noCompiler = run(process.execPath, ['native/install.mjs'], pkgDir, { PATH: emptyPath });
      assert.equal(noCompiler.status, 0, noCompiler.stderr);
      assert.equal(noCompiler.stderr.trim().split('\n').length, 1, noCompiler.stderr);
      if ((process.env.TAILOR_LIBTORCH ?? 'system') === 'system')
        assert.match(noCompiler.stderr, /a C\+\+ compiler \(g\+\+\), make, python3 missing.*apt install/);
      // ... and the package without its engine: mixtures work, tensors name the problem and remedy.
      const script = join(bare, 'check.mjs');
      writeFileSync(
        script,
        `import { GaussianMixture, fromRows } from 'tailor/mixture';
import { EngineUnavailableError, engineAvailable } from 'tailor';
import * as torch from 'tailor/torch';
const gm = new GaussianMixture({ nComponents: 1 }).fit(fromRows([[0], [1], [2]]));
console.log('mean', gm.means[0].toFixed(3), 'engine', engineAvailable());
try { torch.zeros([1]); } catch (e) { console.log(e instanceof EngineUnavailableError, e.message); }
`,
      );
      const without = ok(run(process.execPath, [script], bare), 'the package without its engine');
      assert.match(without, /^mean 1.000 engine false\ntrue the libtorch engine was not built at install \(/);
      assert.match(without, /npm rebuild tailor/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
