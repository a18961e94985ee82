import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pythonHas, repoRoot } from '../helpers.js';

const script = join(repoRoot, 'native', 'resolve-libtorch.mjs');

interface Resolved {
  kind: string;
  version: string;
  cxx11Abi: boolean;
  includeDirs: string[];
  libraries: string[];
  defines: string[];
  cxxStd: string;
}

function resolveWith(selection: string): { status: number | null; stdout: string; stderr: string } {
  // A scratch copy of the resolver, so its selection cache does not touch the checkout's.
  const dir = mkdtempSync(join(tmpdir(), 'tailor-resolve-'));
  execFileSync('cp', [script, dir]);
  const r = spawnSync(process.execPath, [join(dir, 'resolve-libtorch.mjs'), '--json'], {
    env: { ...process.env, TAILOR_LIBTORCH: selection },
    encoding: 'utf8',
  });
  rmSync(dir, { recursive: true, force: true });
  return r;
}

const debianTorch = existsSync('/usr/include/torch/csrc/api/include/torch/version.h');

test('system: Debian headers and libraries, the CXX11 ABI, no rpath', { skip: !debianTorch }, () => {
  const r = resolveWith('system');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout) as Resolved;
  assert.equal(j.kind, 'system');
  assert.match(j.version, /^1\.13\./);
  assert.equal(j.cxx11Abi, true);
  assert.equal(j.cxxStd, 'c++17');
  assert.ok(j.defines.includes('_GLIBCXX_USE_CXX11_ABI=1'));
  assert.ok(j.libraries.includes('-Wl,--no-as-needed'));
  assert.ok(!j.libraries.some((l) => l.includes('rpath')));
});

test(
  'a libtorch directory: its own headers first, /usr/include never, rpath to its lib/',
  { skip: !debianTorch },
  () => {
    // An unpacked-archive layout made of links to Debian's files.
    const dir = mkdtempSync(join(tmpdir(), 'tailor-libtorch-'));
    mkdirSync(join(dir, 'include'));
    mkdirSync(join(dir, 'lib'));
    for (const h of ['ATen', 'c10', 'torch', 'caffe2'])
      symlinkSync(`/usr/include/${h}`, join(dir, 'include', h));
    for (const l of ['libtorch', 'libtorch_cpu', 'libc10'])
      symlinkSync(`/usr/lib/x86_64-linux-gnu/${l}.so`, join(dir, 'lib', `${l}.so`));
    try {
      const r = resolveWith(dir);
      assert.equal(r.status, 0, r.stderr);
      const j = JSON.parse(r.stdout) as Resolved;
      assert.equal(j.kind, 'directory');
      assert.equal(j.includeDirs[0], join(dir, 'include'));
      assert.ok(!j.includeDirs.some((d) => d === '/usr/include' || d.startsWith('/usr/include/torch')));
      assert.equal(j.cxx11Abi, true, 'detected from libc10 symbols');
      assert.ok(j.libraries.includes(`-L${join(dir, 'lib')}`));
      assert.ok(j.libraries.some((l) => l.startsWith('-Wl,-rpath,')));
      assert.ok(j.defines.includes('TAILOR_EXPECT_TORCH_MINOR=13'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('python:/usr/bin/python3 finds the libtorch inside the installed PyTorch', () => {
  if (!pythonHas('/usr/bin/python3', 'torch')) return; // no PyTorch for that Python on this machine
  const r = resolveWith('python:/usr/bin/python3');
  assert.equal(r.status, 0, r.stderr);
  const j = JSON.parse(r.stdout) as Resolved & { root: string };
  assert.equal(j.kind, 'python');
  assert.match(j.root, /torch$/);
  assert.equal(j.includeDirs[0], join(j.root, 'include'));
  assert.ok(!j.includeDirs.includes('/usr/include'));
  assert.ok(j.libraries.some((l) => l === `-Wl,-rpath,${join(j.root, 'lib')}`));
});

test('bad selections are named errors, not build failures', () => {
  const missing = resolveWith('/nonexistent/libtorch');
  assert.equal(missing.status, 1);
  assert.match(
    missing.stderr,
    /tailor: TAILOR_LIBTORCH: '\/nonexistent\/libtorch' is neither system, python/,
  );
  const dir = mkdtempSync(join(tmpdir(), 'tailor-nopy-'));
  const fakePython = join(dir, 'python3');
  writeFileSync(fakePython, '#!/bin/sh\necho "ModuleNotFoundError: No module named torch" >&2\nexit 1\n', {
    mode: 0o755,
  });
  try {
    const r = resolveWith(`python:${fakePython}`);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot import torch with .*python3 .*select it with python:\/path\/to\/python3/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the C++ standard follows the version: C++20 from 2.12', async () => {
  const { cxxStandard } = (await import(script)) as { cxxStandard: (v: string) => string };
  assert.equal(cxxStandard('1.13.0'), 'c++17');
  assert.equal(cxxStandard('2.11.0'), 'c++17');
  assert.equal(cxxStandard('2.12.0'), 'c++20');
  assert.equal(cxxStandard('3.0.0'), 'c++20');
});

test('CUDA math-library headers: from the wheels when the toolkit is minimal; null when missing', async () => {
  const { findCudaLibraryIncludes, findNvidiaInclude } = (await import(script)) as {
    findCudaLibraryIncludes: (
      sitePackages: string,
      runtimeDir: string,
      systemDirs?: string[],
    ) => string[] | null;
    findNvidiaInclude: (sitePackages: string, pkg: string, headers: string[]) => string | null;
  };
  const dir = mkdtempSync(join(tmpdir(), 'tailor-cuda-lib-'));
  const saved = process.env.CUDA_HOME;
  try {
    process.env.CUDA_HOME = join(dir, 'none');
    // A minimal toolkit: the runtime's headers only.
    const toolkit = join(dir, 'cuda', 'include');
    mkdirSync(toolkit, { recursive: true });
    writeFileSync(join(toolkit, 'cuda_runtime_api.h'), '');
    // CUDA 13 wheels: every library in nvidia/cu13/include.
    const cu13 = join(dir, 'site13', 'nvidia', 'cu13', 'include');
    mkdirSync(cu13, { recursive: true });
    for (const h of ['cusparse.h', 'cublasLt.h', 'cusolverDn.h']) writeFileSync(join(cu13, h), '');
    assert.deepEqual(findCudaLibraryIncludes(join(dir, 'site13'), toolkit, []), [cu13]);
    // CUDA 12 wheels: one package per library.
    const site12 = join(dir, 'site12', 'nvidia');
    const perLib: Record<string, string> = {
      cusparse: 'cusparse.h',
      cublas: 'cublasLt.h',
      cusolver: 'cusolverDn.h',
    };
    for (const [pkg, h] of Object.entries(perLib)) {
      mkdirSync(join(site12, pkg, 'include'), { recursive: true });
      writeFileSync(join(site12, pkg, 'include', h), '');
    }
    const found = findCudaLibraryIncludes(join(dir, 'site12'), toolkit, []);
    assert.deepEqual(new Set(found), new Set(Object.keys(perLib).map((p) => join(site12, p, 'include'))));
    // A full toolkit needs nothing more.
    for (const h of ['cusparse.h', 'cublasLt.h', 'cusolverDn.h']) writeFileSync(join(toolkit, h), '');
    assert.deepEqual(findCudaLibraryIncludes(join(dir, 'nosite'), toolkit, []), []);
    // One library nowhere: null (c10d's NCCL backend is then left out of the build).
    // (A full CUDA toolkit installed on the machine would supply it: then the case cannot be set up.)
    rmSync(join(toolkit, 'cusolverDn.h'));
    if (findNvidiaInclude(join(dir, 'nosite'), 'cusolver', ['cusolverDn.h']) === null)
      assert.equal(findCudaLibraryIncludes(join(dir, 'nosite'), toolkit, []), null);
    // In the compiler's own search path it needs no directory of its own.
    const system = join(dir, 'usr-include');
    mkdirSync(system);
    writeFileSync(join(system, 'cusolverDn.h'), '');
    assert.deepEqual(findCudaLibraryIncludes(join(dir, 'nosite'), toolkit, [system]), []);
  } finally {
    if (saved === undefined) delete process.env.CUDA_HOME;
    else process.env.CUDA_HOME = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('CUDA headers: a wheel include directory only when complete, else the toolkit', async () => {
  const { findNvidiaInclude } = (await import(script)) as {
    findNvidiaInclude: (sitePackages: string, pkg: string, headers: string[]) => string | null;
  };
  const dir = mkdtempSync(join(tmpdir(), 'tailor-cuda-inc-'));
  const saved = process.env.CUDA_HOME;
  try {
    // A CUDA 13 runtime wheel: cuda_runtime_api.h without the crt/ headers it includes.
    const wheel = join(dir, 'site', 'nvidia', 'cu13', 'include');
    mkdirSync(wheel, { recursive: true });
    writeFileSync(join(wheel, 'cuda_runtime_api.h'), '');
    writeFileSync(join(wheel, 'nccl.h'), '');
    const toolkit = join(dir, 'cuda');
    mkdirSync(join(toolkit, 'include', 'crt'), { recursive: true });
    writeFileSync(join(toolkit, 'include', 'cuda_runtime_api.h'), '');
    writeFileSync(join(toolkit, 'include', 'crt', 'host_config.h'), '');
    process.env.CUDA_HOME = toolkit;
    const runtime = ['cuda_runtime_api.h', 'crt/host_config.h'];
    assert.equal(findNvidiaInclude(join(dir, 'site'), 'cuda_runtime', runtime), join(toolkit, 'include'));
    assert.equal(findNvidiaInclude(join(dir, 'site'), 'nccl', ['nccl.h']), wheel, 'NCCL from the wheel');
    // A complete wheel wins over the toolkit.
    mkdirSync(join(wheel, 'crt'));
    writeFileSync(join(wheel, 'crt', 'host_config.h'), '');
    assert.equal(findNvidiaInclude(join(dir, 'site'), 'cuda_runtime', runtime), wheel);
    process.env.CUDA_HOME = join(dir, 'none');
    assert.equal(findNvidiaInclude(join(dir, 'nosite'), 'nccl', ['nccl.h']), null);
  } finally {
    if (saved === undefined) delete process.env.CUDA_HOME;
    else process.env.CUDA_HOME = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
