// `tailor version [--engine] [--json] [--check]`: the tailor version and the libtorch the addon
// was built against, read from the build's record without loading libtorch; --engine, --json and
// --check load the engine and add what it was built with (C++ ABI, CUDA and its devices, cuDNN,
// distributed backends). --check also compares every wrapped operator's schema with the running
// libtorch's.
import { CliError } from '../errors.js';
import { defineCommand } from '../command.js';
import { version } from '../../index.js';

const HELP = `usage: tailor version [--engine] [--json] [--check]

  (plain)   the tailor version and the libtorch the addon was built against (starts at once:
            libtorch is not loaded)
  --engine  load libtorch and add its threads, C++ ABI, CUDA devices, cuDNN, Gloo/NCCL
  --json    one JSON object: {tailor, libtorch, libtorch_selection, cxx11_abi, threads,
            cuda: {available, version, devices}, cuda_graphs: {available, reason?}, cudnn,
            distributed: {gloo, nccl}}
  --check   compare the schemas of every wrapped libtorch operator with the running libtorch
            (exit 1 and name each changed argument position or type)`;

const FLAGS = ['--engine', '--json', '--check'];

export const run = defineCommand({
  help: HELP,
  options: {
    engine: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
  },
  // Exact words in any order; -h or --help wins wherever it stands; anything else is named.
  parse: (argv) => {
    const help = argv.includes('-h') || argv.includes('--help');
    const unknown = argv.find((a) => !FLAGS.includes(a));
    if (!help && unknown !== undefined) throw new CliError(`version: unknown option ${unknown}\n\n${HELP}`);
    const has = (flag: string) => argv.includes(flag);
    return {
      values: { help, engine: has('--engine'), json: has('--json'), check: has('--check') },
      positionals: [],
    };
  },
  run: async ({ values }) => {
    const { json, check } = values;
    if (!json && !check && !values.engine) {
      const { libtorchSelection, buildAdvice } = await import('../../torch/native.js');
      const selection = libtorchSelection();
      console.log(`tailor ${version}`);
      console.log(
        selection
          ? `libtorch ${selection.version} (${selection.kind}: ${selection.libDir}${selection.cuda ? `, CUDA ${selection.cuda}` : ''})`
          : `libtorch: the native addon is not built (${buildAdvice()})`,
      );
      return 0;
    }
    let engine: typeof import('../../torch/native.js');
    // --check reports the differences itself instead of failing at load.
    if (check) process.env.TAILOR_SCHEMA_CHECK = '0';
    try {
      engine = await import('../../torch/native.js');
      engine.ensureNativeLoaded();
    } catch (error) {
      const message = (error as Error).message;
      if (json) {
        console.log(JSON.stringify({ tailor: version, libtorch: null, error: message }));
      } else {
        console.log(`tailor ${version}\nlibtorch engine not available: ${message}`);
      }
      return check ? 1 : 0;
    }
    const { native, libtorchSelection } = engine;
    const { cudaGraphsInfo } = await import('../../torch/cuda-graph.js');
    const build = native.buildInfo();
    const cuda = native.cudaInfo();
    const selection = libtorchSelection();
    const info = {
      tailor: version,
      libtorch: native.torchVersion,
      libtorch_selection: selection
        ? { kind: selection.kind, selection: selection.selection, lib: selection.libDir }
        : null,
      cxx11_abi: build.cxx11Abi,
      threads: native.getNumThreads(),
      cuda: { available: cuda.available, version: cuda.version, devices: cuda.devices },
      cuda_graphs: cudaGraphsInfo(),
      cudnn: cuda.cudnn,
      distributed: { gloo: build.gloo, nccl: build.nccl },
    };
    let checkResult: { checked: number; mismatches: { op: string; reason: string }[] } | undefined;
    if (check) {
      const { checkOpSchemas } = await import('../../torch/schema-check.js');
      checkResult = checkOpSchemas();
    }
    if (json) {
      console.log(
        JSON.stringify(
          checkResult
            ? { ...info, schema_check: { checked: checkResult.checked, mismatches: checkResult.mismatches } }
            : info,
        ),
      );
    } else {
      console.log(`tailor ${info.tailor}`);
      const where = selection ? ` (${selection.kind}: ${selection.libDir})` : '';
      console.log(
        `libtorch ${info.libtorch}${where}, ${info.threads} threads, C++11 ABI ${info.cxx11_abi ? 'yes' : 'no'}`,
      );
      console.log(
        `CUDA ${cuda.version ?? 'none'}: ${cuda.available ? cuda.devices.join(', ') : 'not available'}` +
          `${cuda.cudnn ? `, cuDNN ${cuda.cudnn}` : ''}`,
      );
      const graphs = info.cuda_graphs;
      console.log(`CUDA graphs: ${graphs.available ? 'yes' : `no (${graphs.reason})`}`);
      console.log(`distributed: gloo ${build.gloo ? 'yes' : 'no'}, nccl ${build.nccl ? 'yes' : 'no'}`);
      if (checkResult) {
        console.log(
          `operator schemas: ${checkResult.checked} checked, ${checkResult.mismatches.length} changed`,
        );
        for (const m of checkResult.mismatches) console.log(`  ${m.op}: ${m.reason}`);
      }
    }
    return checkResult && checkResult.mismatches.length > 0 ? 1 : 0;
  },
});
