// Generates src/torch/generated/aten.ts: one typed wrapper per operator of src/torch/ops.list,
// from the schemas registered in the installed libtorch (so signatures can never drift from
// the engine). Run after changing ops.list: `node scripts/gen-ops.mjs`.
import { createRequire } from 'node:module';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const native = require(`${root}native/build/Release/tailor_native.node`);
// The schema reader of the start-up check, so that generator and check split schemas alike.
const parser = `${root}dist/src/torch/schema-parse.js`;
if (!existsSync(parser)) {
  console.error(
    'gen-ops: build the TypeScript first (npm run build:ts): it reads schemas with dist/src/torch/schema-parse.js',
  );
  process.exit(2);
}
const { schemaParts, splitTopLevel } = await import(parser);

const wanted = readFileSync(`${root}src/torch/ops.list`, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

const schemas = new Map();
for (const s of native.listSchemas('aten::')) {
  const head = s.slice(0, s.indexOf('('));
  schemas.set(head.slice('aten::'.length), s);
}

const reserved = new Set(['self', 'from', 'to', 'in', 'function', 'default', 'var', 'out']);
const safeName = (n) => (reserved.has(n) ? `${n}_` : n);

function tsType(type) {
  const optional = type.endsWith('?') && !type.endsWith('[]?');
  const base = type.replace(/\?$/, '');
  let t;
  if (base === 'Tensor') t = 'Tensor';
  else if (base === 'Tensor[]') t = 'Tensor[]';
  else if (base === 'Tensor?[]') t = '(Tensor | null)[]';
  else if (/^(int|SymInt)$/.test(base)) t = 'number';
  else if (/^(int|SymInt)\[\d*\]\??$/.test(base)) t = 'number | number[]';
  else if (base === 'float') t = 'number';
  else if (/^float\[\d*\]\??$/.test(base)) t = 'number[]';
  else if (base === 'bool') t = 'boolean';
  else if (/^bool\[\d*\]$/.test(base)) t = 'boolean[]';
  else if (base === 'Scalar') t = 'Scalar';
  else if (base === 'ScalarType') t = 'DType';
  else if (base === 'str') t = 'string';
  else if (base === 'Device') t = 'string';
  else if (base === 'Layout' || base === 'MemoryFormat') t = 'number';
  else if (base === 'Generator') return { t: 'null', base, nullable: true };
  else throw new Error(`unsupported type ${type}`);
  const nullable = optional || type.endsWith('[]?');
  return { t: nullable ? `${t} | null` : t, base, nullable };
}

function toNative(arg, v, op) {
  const base = arg.type.replace(/\?$/, '');
  const nullable = arg.type.endsWith('?');
  // checked (src/torch/op-args.ts), so that a wrong value names the operator and the argument
  const where = `'${op}', '${arg.name}'`;
  const orNull = (conv) => (nullable ? `${v} == null ? ${v} : ${conv}` : conv);
  if (base === 'Tensor') return orNull(`tensorArg(${v}, ${where})`);
  if (base === 'Tensor[]') return `tensorListArg(${v}, ${where})`;
  if (base === 'Tensor?[]') return `tensorListArg(${v}, ${where}, true)`;
  if (base === 'ScalarType') return `${v} == null ? ${v} : dtypeCode(${v})`;
  if (base === 'Scalar') return orNull(`scalarArgOf(${v}, ${where})`);
  if (/^(int|SymInt|float)$/.test(base)) return orNull(`numberArgOf(${v}, ${where})`);
  return v;
}

function retType(ret) {
  const inner = ret.startsWith('(') ? splitTopLevel(ret.slice(1, -1)) : [ret];
  const kinds = inner.map((r) => {
    const t = r.replace(/\([a-z][^)]*\)/g, '').split(' ')[0];
    if (t === 'Tensor') return 'Tensor';
    if (t === 'Tensor[]') return 'Tensor[]';
    if (t === 'int' || t === 'float' || t === 'Scalar' || t === 'SymInt') return 'number';
    if (t === 'bool') return 'boolean';
    if (t === '') return 'void';
    throw new Error(`unsupported return ${ret}`);
  });
  if (ret === '()') return { ts: 'void', wrap: () => '' };
  if (!ret.startsWith('(') || inner.length === 1) {
    const k = kinds[0];
    if (k === 'Tensor') return { ts: 'Tensor', wrap: (e) => `return wrap(${e} as number);` };
    if (k === 'Tensor[]') return { ts: 'Tensor[]', wrap: (e) => `return (${e} as number[]).map(wrap);` };
    return { ts: k, wrap: (e) => `return ${e} as ${k};` };
  }
  const ts = `[${kinds.join(', ')}]`;
  const parts = kinds.map((k, i) =>
    k === 'Tensor'
      ? `wrap(r[${i}] as number)`
      : k === 'Tensor[]'
        ? `(r[${i}] as number[]).map(wrap)`
        : `r[${i}] as ${k}`,
  );
  return { ts, wrap: (e) => `const r = ${e} as unknown[];\n  return [${parts.join(', ')}];` };
}

// libtorch 1.13's max_unpool2d/3d index the input's and output_size's dims without checking
// their counts first: a 0-d input or a short output_size is a segmentation fault.
const UNCHECKED_KERNELS = { max_unpool2d: 'maxUnpoolGuard', max_unpool3d: 'maxUnpoolGuard' };

// Operators with a batching rule of tailor's own (src/torch/vmap-rules.ts): libtorch's batched
// tensors have none for them, and its per-example fallback is slow (or, for views, an error).
// Inside vmap their wrappers try the rule first.
const BATCHING_RULES = new Set([
  'linear',
  'matmul',
  'mean',
  'mean_dim',
  'sum',
  'amax',
  'amin',
  'logsumexp',
  'flatten_using_ints',
  'log_softmax_int',
  'softmax_int',
  'cross_entropy_loss',
  'nll_loss_nd',
  'mse_loss',
  'l1_loss',
  'binary_cross_entropy_with_logits',
  'conv1d',
  'conv2d',
  'max_pool1d',
  'max_pool2d',
  'avg_pool1d',
  'avg_pool2d',
  'adaptive_avg_pool2d',
  'layer_norm',
  'batch_norm',
  'dropout',
  'gelu',
  'softplus',
  'silu',
  'elu',
  'leaky_relu',
  'hardtanh',
  'hardswish',
  'mish',
  'where_self',
  'maximum',
  'minimum',
  'unflatten_int',
  'ravel',
  'repeat',
  'roll',
  'flip',
  'einsum',
  'outer',
  'gather',
  'index_select',
  'embedding',
  'masked_fill_Scalar',
  'masked_fill_Tensor',
  'cosine_similarity',
  'argmax',
  'argmin',
  'max_dim',
  'min_dim',
  'sort',
  'topk',
  'cumsum',
  'logcumsumexp',
  'prod_dim_int',
  'glu',
  'var_correction',
  'std_correction',
  'linalg_vector_norm',
  'atan2',
  'fmod_Tensor',
  'remainder_Tensor',
  'fmod_Scalar',
  'remainder_Scalar',
  'erf',
  'log_sigmoid',
  'relu6',
  'selu',
  'celu',
  'group_norm',
  'kl_div',
  'huber_loss',
  'smooth_l1_loss',
  'constant_pad_nd',
  'sort_stable',
  'argsort_stable',
  'pad',
  'randn',
  'rand',
  'randint_low',
  'randperm',
  'rand_like',
  'randn_like',
  'randint_like',
  'randint_like_low_dtype',
  'feature_dropout',
  'alpha_dropout',
]);

const out = [
  '// Generated by scripts/gen-ops.mjs from src/torch/ops.list and the schemas of the installed',
  '// libtorch. Do not edit by hand.',
  "import { native } from '../native.js';",
  "import { Tensor, wrap, type Scalar } from '../tensor.js';",
  "import { maxUnpoolGuard, numberArgOf, scalarArgOf, tensorArg, tensorListArg } from '../op-args.js';",
  "import { dtypeCode, type DType } from '../dtype.js';",
  "import { batchingRules, vmapLevels } from '../vmap-levels.js';",
  '',
];
for (const op of BATCHING_RULES)
  if (!wanted.some((entry) => entry.replace('.', '_') === op))
    throw new Error(`gen-ops: the batching rule op ${op} is not in ops.list`);
for (const entry of wanted) {
  const schema = schemas.get(entry);
  if (!schema) throw new Error(`ops.list: no schema aten::${entry} in this libtorch`);
  const { args, ret } = schemaParts(schema);
  const fnName = entry.replace('.', '_');
  const idVar = `op_${fnName}`;
  // Parameters after the first defaulted one are optional too (TypeScript needs a suffix).
  let seenOptional = false;
  const params = args.map((a) => {
    const { t } = tsType(a.type);
    const optional = a.hasDefault || a.type.endsWith('?') || seenOptional;
    if (optional) seenOptional = true;
    return { ...a, ts: t, optional };
  });
  const sig = params.map((p) => `${safeName(p.name)}${p.optional ? '?' : ''}: ${p.ts}`).join(', ');
  const callArgs = params
    .map((p) => {
      const v = safeName(p.name);
      const conv = toNative(p, v, entry);
      return p.optional && conv !== v ? `${v} === undefined ? undefined : ${conv}` : conv;
    })
    .join(', ');
  const r = retType(ret);
  const [name, overload = ''] = entry.split('.');
  out.push(`let ${idVar} = -1;`);
  out.push(`/** \`${schema.replace(/\*\//g, '* /')}\` */`);
  out.push(`export function ${fnName}(${sig}): ${r.ts} {`);
  if (BATCHING_RULES.has(fnName)) {
    const names = params.map((p) => safeName(p.name)).join(', ');
    out.push('  if (vmapLevels.length > 0) {');
    out.push(`    const batched = batchingRules.${fnName}?.(${names});`);
    out.push(`    if (batched !== undefined) return batched as ${r.ts};`);
    out.push('  }');
  }
  out.push(`  if (${idVar} < 0) ${idVar} = native.resolve('aten::${name}', '${overload}');`);
  // Operators whose kernels read their sizes unchecked (a crash, not an error, on a bad call):
  // a guard of src/torch/op-args.ts checks them first.
  if (UNCHECKED_KERNELS[entry])
    out.push(`  ${UNCHECKED_KERNELS[entry]}('${name}', ${params.map((p) => safeName(p.name)).join(', ')});`);
  const inPlace = /^Tensor\(a!\)$/.test(ret) && /Tensor\(a!\) self/.test(schema);
  if (inPlace) {
    // In-place operators return self: hand back the caller's Tensor instead of a new handle.
    out.push(`  native.callVoid(${idVar}, ${callArgs});`);
    out.push('  return self_;');
  } else if (r.ts === 'void') out.push(`  native.callVoid(${idVar}, ${callArgs});`);
  else out.push(`  ${r.wrap(`native.call(${idVar}, ${callArgs})`)}`);
  out.push('}');
  out.push('');
}
writeFileSync(`${root}src/torch/generated/aten.ts`, out.join('\n'));

// The schemas the wrappers were generated from: at start-up under another libtorch version (and
// with `tailor version --check`) src/torch/schema-check.ts compares them with the running ones.
const expected = [
  '// Generated by scripts/gen-ops.mjs: the operator schemas src/torch/generated/aten.ts was made',
  '// from. Do not edit by hand.',
  `export const GENERATED_WITH = '${native.torchVersion}';`,
  '',
  'export const EXPECTED_SCHEMAS: Readonly<Record<string, string>> = {',
  ...wanted.map((entry) => `  ${JSON.stringify(entry)}: ${JSON.stringify(schemas.get(entry))},`),
  '};',
  '',
];
writeFileSync(`${root}src/torch/generated/schemas.ts`, expected.join('\n'));

// The operators whose wrappers try a batching rule of tailor's own inside vmap: vmap-rules.ts
// must give each one (its type says so).
writeFileSync(
  `${root}src/torch/generated/batching-rule-ops.ts`,
  [
    '// Generated by scripts/gen-ops.mjs: the operators whose wrappers try a batching rule of',
    "// tailor's own inside vmap (src/torch/vmap-rules.ts). Do not edit by hand.",
    `export const BATCHING_RULE_OPS = ${JSON.stringify([...BATCHING_RULES].sort())} as const;`,
    '',
  ].join('\n'),
);
console.log(`gen-ops: ${wanted.length} operators -> src/torch/generated/aten.ts`);
