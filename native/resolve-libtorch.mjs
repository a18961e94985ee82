#!/usr/bin/env node
// Resolves which libtorch the addon builds against, from TAILOR_LIBTORCH:
//   unset | system          Debian's libtorch-dev (/usr/include, /usr/lib/<triplet>)
//   python | python:/p/y3   the libtorch inside an installed PyTorch (CPU or CUDA wheel)
//   /a/directory            an unpacked libtorch archive with include/ and lib/
// binding.gyp calls `node resolve-libtorch.mjs <field>` for its include dirs, defines, flags and
// libraries; `--json` prints the whole resolution (setup.sh records it beside the build, so a
// changed selection triggers a rebuild). Python is asked once per selection: the answer is
// cached in native/.libtorch-cache.json.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export class LibtorchSelectionError extends Error {
  constructor(message) {
    super(`TAILOR_LIBTORCH: ${message}`);
    this.name = 'LibtorchSelectionError';
  }
}

/** The C++ standard a libtorch version needs: 2.12+ headers use C++20, earlier ones C++17. */
export function cxxStandard(version) {
  const [major, minor] = version.split('.').map((v) => parseInt(v, 10));
  if (major > 2 || (major === 2 && minor >= 12)) return 'c++20';
  return 'c++17';
}

/** Reads TORCH_VERSION_{MAJOR,MINOR,PATCH} from the headers' torch/version.h. */
export function headerVersion(includeDir) {
  const file = join(includeDir, 'torch/csrc/api/include/torch/version.h');
  if (!existsSync(file))
    throw new LibtorchSelectionError(`${file} is missing: not a libtorch include directory`);
  const text = readFileSync(file, 'utf8');
  const field = (name) => {
    const m = text.match(new RegExp(`#define TORCH_VERSION_${name} (\\d+)`));
    if (!m) throw new LibtorchSelectionError(`${file} has no TORCH_VERSION_${name}`);
    return m[1];
  };
  return `${field('MAJOR')}.${field('MINOR')}.${field('PATCH')}`;
}

/**
 * The C++ ABI of a libtorch build, from its libc10: std::string symbols of the CXX11 ABI live in
 * namespace std::__cxx11 (mangled `St7__cxx11`), pre-CXX11 builds have none.
 */
export function detectCxx11Abi(libDir) {
  const override = process.env.TAILOR_LIBTORCH_CXX11_ABI;
  if (override === '0' || override === '1') return override === '1';
  const lib = join(libDir, 'libc10.so');
  if (!existsSync(lib))
    throw new LibtorchSelectionError(`${lib} is missing: not a libtorch library directory`);
  return readFileSync(lib).includes('St7__cxx11');
}

function systemLibDir() {
  for (const dir of ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib']) {
    if (existsSync(join(dir, 'libtorch.so'))) return dir;
  }
  return '/usr/lib/x86_64-linux-gnu';
}

const PYTHON_QUERY = `
import json, os, sys
import torch
d = os.path.dirname(os.path.realpath(torch.__file__))
dist = torch.distributed.is_available()
print(json.dumps({
  "root": d,
  "version": torch.__version__.split("+")[0],
  "cuda": torch.version.cuda,
  "cxx11Abi": bool(torch._C._GLIBCXX_USE_CXX11_ABI),
  "nccl": bool(dist and torch.distributed.is_nccl_available()),
  "sitePackages": os.path.dirname(d),
}))
`;

function askPython(python) {
  let out;
  try {
    out = execFileSync(python, ['-c', PYTHON_QUERY], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String(error.stderr ?? error.message)
      .trim()
      .split('\n')
      .pop();
    throw new LibtorchSelectionError(
      `cannot import torch with ${python} (${stderr}); install PyTorch there or select it with python:/path/to/python3`,
    );
  }
  return JSON.parse(out.trim().split('\n').pop());
}

// CUDA and NCCL headers of a wheel install come from the nvidia-* wheels beside torch (CUDA 12
// wheels: nvidia/<pkg>/include; CUDA 13: nvidia/cu13/include); else from the CUDA toolkit
// (CUDA_HOME, CUDA_PATH, /usr/local/cuda or the one nvcc is in). A directory counts only when it
// holds every header named: the CUDA 13 runtime wheel ships cuda_runtime.h without the
// crt/host_config.h it includes, which the toolkit has.
export function findNvidiaInclude(sitePackages, pkg, headers) {
  const candidates = [];
  if (sitePackages && existsSync(join(sitePackages, 'nvidia'))) {
    candidates.push(join(sitePackages, 'nvidia', pkg, 'include'));
    for (const d of readdirSync(join(sitePackages, 'nvidia')))
      candidates.push(join(sitePackages, 'nvidia', d, 'include'));
  }
  for (const home of [process.env.CUDA_HOME, process.env.CUDA_PATH, '/usr/local/cuda', nvccHome()])
    if (home) candidates.push(join(home, 'include'));
  return candidates.find((dir) => headers.every((h) => existsSync(join(dir, h)))) ?? null;
}

// The CUDA math-library headers that libtorch's ATen/cuda/CUDAContextLight.h includes (through
// c10d's ProcessGroupNCCL.hpp). A minimal toolkit has the runtime's headers without them; the
// wheels hold them (CUDA 13: nvidia/cu13/include; CUDA 12: nvidia/cusparse/include and so on).
// Each header with the CUDA 12 wheel that holds it.
const CUDA_LIBRARY_HEADERS = { 'cusparse.h': 'cusparse', 'cublasLt.h': 'cublas', 'cusolverDn.h': 'cusolver' };

// The include directories, after the runtime's, that complete CUDA_LIBRARY_HEADERS; null when
// one of them is nowhere to be found (then c10d's NCCL backend cannot be compiled). A header in
// the compiler's own search path (Debian's CUDA packages put theirs in /usr/include) needs none.
export function findCudaLibraryIncludes(
  sitePackages,
  runtimeDir,
  systemDirs = ['/usr/include', '/usr/local/include'],
) {
  const dirs = [];
  const found = (header) => [runtimeDir, ...dirs, ...systemDirs].some((d) => existsSync(join(d, header)));
  for (const [header, pkg] of Object.entries(CUDA_LIBRARY_HEADERS)) {
    if (found(header)) continue;
    const dir = findNvidiaInclude(sitePackages, pkg, [header]);
    if (!dir) return null;
    dirs.push(dir);
  }
  return dirs;
}

function nvccHome() {
  try {
    const nvcc = execFileSync('sh', ['-c', 'command -v nvcc'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return nvcc ? dirname(dirname(realpathSync(nvcc))) : null;
  } catch {
    return null;
  }
}

// Gloo headers: the libtorch's own when it ships them; otherwise Debian's libgloo-dev, exposed
// through a directory holding only `gloo` so that /usr/include (and its torch headers) stays out.
function glooInclude(includeDir) {
  if (existsSync(join(includeDir, 'gloo/algorithm.h'))) return { dir: null };
  // TAILOR_GLOO_INCLUDE: a directory holding gloo/ (headers of the libtorch's Gloo version).
  const given = process.env.TAILOR_GLOO_INCLUDE;
  if (given) {
    if (!existsSync(join(given, 'gloo/algorithm.h')))
      throw new LibtorchSelectionError(`TAILOR_GLOO_INCLUDE=${given} holds no gloo/algorithm.h`);
    return { dir: given };
  }
  if (!existsSync('/usr/include/gloo/algorithm.h')) return null;
  const shim = join(here, 'build-deps/gloo-include');
  if (!existsSync(join(shim, 'gloo'))) {
    mkdirSync(shim, { recursive: true });
    symlinkSync('/usr/include/gloo', join(shim, 'gloo'));
  }
  return { dir: shim };
}

/** Resolves a TAILOR_LIBTORCH value to paths, version, ABI and capabilities. */
export function resolveLibtorch(selection = process.env.TAILOR_LIBTORCH ?? '') {
  const sel = selection.trim();
  if (sel === '' || sel === 'system') {
    const libDir = systemLibDir();
    const version = headerVersion('/usr/include');
    return finish({
      selection: 'system',
      kind: 'system',
      root: '/usr',
      includeDirs: ['/usr/include', '/usr/include/torch/csrc/api/include'],
      libDir,
      version,
      cxx11Abi: detectCxx11Abi(libDir),
      cuda: null,
      rpath: false,
      gloo: existsSync('/usr/include/gloo/algorithm.h') ? { dir: null } : null,
      ncclAvailable: false,
    });
  }
  if (sel === 'python' || sel.startsWith('python:')) {
    const python = sel === 'python' ? 'python3' : sel.slice('python:'.length);
    const py = askPython(python);
    const includeDir = join(py.root, 'include');
    const libDir = join(py.root, 'lib');
    return finish({
      selection: sel,
      kind: 'python',
      python,
      root: py.root,
      includeDirs: [includeDir, join(includeDir, 'torch/csrc/api/include')],
      libDir,
      version: py.version,
      cxx11Abi: py.cxx11Abi,
      cuda: py.cuda,
      rpath: true,
      gloo: glooInclude(includeDir),
      ncclAvailable: py.nccl,
      sitePackages: py.sitePackages,
    });
  }
  const root = resolve(sel);
  if (!existsSync(join(root, 'include')) || !existsSync(join(root, 'lib'))) {
    throw new LibtorchSelectionError(
      `'${sel}' is neither system, python, python:/path nor a libtorch directory with include/ and lib/`,
    );
  }
  const includeDir = join(root, 'include');
  const libDir = join(root, 'lib');
  const hasNccl =
    readdirSync(libDir).some((f) => f.startsWith('libnccl')) || existsSync(join(includeDir, 'nccl.h'));
  return finish({
    selection: root,
    kind: 'directory',
    root,
    includeDirs: [includeDir, join(includeDir, 'torch/csrc/api/include')],
    libDir,
    version: headerVersion(includeDir),
    cxx11Abi: detectCxx11Abi(libDir),
    cuda: existsSync(join(libDir, 'libtorch_cuda.so')) ? 'unknown' : null,
    rpath: true,
    gloo: glooInclude(includeDir),
    ncclAvailable: hasNccl,
  });
}

function finish(r) {
  const includeDirs = [...r.includeDirs];
  if (r.gloo?.dir) includeDirs.push(r.gloo.dir);
  const hasCudaLib = existsSync(join(r.libDir, 'libtorch_cuda.so'));
  const cudaInclude = findNvidiaInclude(r.sitePackages, 'cuda_runtime', [
    'cuda_runtime_api.h',
    'crt/host_config.h',
  ]);
  const ncclInclude = findNvidiaInclude(r.sitePackages, 'nccl', ['nccl.h']);
  const defines = [`_GLIBCXX_USE_CXX11_ABI=${r.cxx11Abi ? 1 : 0}`];
  const [major, minor] = r.version.split('.');
  // The addon asserts at compile time that torch/version.h is the selected one (no header leak).
  defines.push(`TAILOR_EXPECT_TORCH_MAJOR=${major}`, `TAILOR_EXPECT_TORCH_MINOR=${minor}`);
  if (r.gloo) defines.push('USE_C10D_GLOO', 'TAILOR_GLOO=1');
  if (hasCudaLib && cudaInclude) {
    includeDirs.push(cudaInclude);
    defines.push('TAILOR_CUDA_HEADERS=1');
    const libraryIncludes = findCudaLibraryIncludes(r.sitePackages, cudaInclude);
    if (r.ncclAvailable && ncclInclude && libraryIncludes) {
      includeDirs.push(...libraryIncludes.filter((d) => !includeDirs.includes(d)));
      if (!includeDirs.includes(ncclInclude)) includeDirs.push(ncclInclude);
      defines.push('USE_C10D_NCCL', 'TAILOR_NCCL=1');
    }
  }
  const libraries = ['-Wl,--no-as-needed', `-L${r.libDir}`, '-ltorch', '-ltorch_cpu', '-lc10'];
  if (hasCudaLib) libraries.push('-ltorch_cuda', '-lc10_cuda');
  // Debian's libtorch links libgloo dynamically (so must the addon); wheels carry gloo inside
  // libtorch_cpu, and a second copy would be linked against mismatched headers.
  if (r.gloo && linksSharedGloo(r.libDir)) libraries.push('-lgloo');
  if (r.rpath) libraries.push(`-Wl,-rpath,${realpathOr(r.libDir)}`);
  libraries.push('-Wl,--as-needed');
  return {
    ...r,
    includeDirs,
    defines,
    cxxStd: cxxStandard(r.version),
    libraries,
    hasCudaLib,
    glooHeaders: Boolean(r.gloo),
  };
}

function linksSharedGloo(libDir) {
  const lib = join(libDir, 'libtorch_cpu.so');
  return existsSync(lib) && readFileSync(lib).includes('libgloo.so');
}

function realpathOr(p) {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function cached(selection) {
  const file = join(here, '.libtorch-cache.json');
  const key = selection || 'system';
  try {
    const c = JSON.parse(readFileSync(file, 'utf8'));
    if (c.key === key && c.value && existsSync(c.value.libDir)) return c.value;
  } catch {
    // no cache yet
  }
  const value = resolveLibtorch(selection);
  writeFileSync(file, JSON.stringify({ key, value }, null, 1));
  return value;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const field = process.argv[2] ?? '--json';
  try {
    const r = cached(process.env.TAILOR_LIBTORCH ?? '');
    const fields = {
      '--json': () => JSON.stringify(r, null, 1),
      include_dirs: () => r.includeDirs.join(' '),
      defines: () => r.defines.join(' '),
      cxx_std: () => `-std=${r.cxxStd}`,
      libraries: () => r.libraries.join(' '),
      // For a compiler command line without node-gyp (scripts/gpu-check.sh).
      cflags: () =>
        [`-std=${r.cxxStd}`, ...r.defines.map((d) => `-D${d}`), ...r.includeDirs.map((d) => `-I${d}`)].join(
          ' ',
        ),
    };
    if (!fields[field]) throw new LibtorchSelectionError(`unknown field ${field}`);
    process.stdout.write(`${fields[field]()}\n`);
  } catch (error) {
    process.stderr.write(`tailor: ${error.message}\n`);
    process.exit(1);
  }
}
