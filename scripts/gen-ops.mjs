// Generates src/torch/generated/aten.ts: one typed wrapper per operator of src/torch/ops.list,
// from the schemas registered in the installed libtorch (so signatures can never drift from
// the engine). Run after changing ops.list: `node scripts/gen-ops.mjs`.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(import.meta.url);
const root = new URL('..', import.meta.url).pathname;
const native = require(`${root}native/build/Release/tailor_native.node`);

const wanted = readFileSync(`${root}src/torch/ops.list`, 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

const schemas = new Map();
for (const s of native.listSchemas('aten::')) {
  const head = s.slice(0, s.indexOf('('));
  schemas.set(head.slice('aten::'.length), s);
}

function splitTopLevel(text) {
  const parts = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(' || ch === '[') depth++;
    if (ch === ')' || ch === ']') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

function parseSchema(schema) {
  const open = schema.indexOf('(');
  let depth = 0;
  let close = -1;
  for (let i = open; i < schema.length; i++) {
    if (schema[i] === '(') depth++;
    if (schema[i] === ')' && --depth === 0) {
      close = i;
      break;
    }
  }
  const args = [];
  for (const part of splitTopLevel(schema.slice(open + 1, close))) {
    if (part === '*') continue;
    const eq = part.indexOf('=');
    const decl = eq >= 0 ? part.slice(0, eq) : part;
    const space = decl.lastIndexOf(' ');
    const type = decl
      .slice(0, space)
      .replace(/\([a-z][^)]*\)/g, '')
      .trim();
    const name = decl.slice(space + 1).trim();
    args.push({ type, name, hasDefault: eq >= 0 });
  }
  const ret = schema.slice(schema.indexOf('->', close) + 2).trim();
  return { args, ret };
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

function toNative(arg, v) {
  const base = arg.type.replace(/\?$/, '');
  const nullable = arg.type.endsWith('?');
  if (base === 'Tensor') return nullable ? `${v} == null ? ${v} : ${v}.handle` : `${v}.handle`;
  if (base === 'Tensor[]') return `${v}.map((t) => t.handle)`;
  if (base === 'Tensor?[]') return `${v}.map((t) => (t === null ? null : t.handle))`;
  if (base === 'ScalarType') return `${v} == null ? ${v} : dtypeCode(${v})`;
  if (base === 'Scalar') return `scalarArg(${v})`;
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

const out = [
  '// Generated by scripts/gen-ops.mjs from src/torch/ops.list and the schemas of the installed',
  '// libtorch. Do not edit by hand.',
  "import { native } from '../native.js';",
  "import { Tensor, wrap, scalarArg, type Scalar } from '../tensor.js';",
  "import { dtypeCode, type DType } from '../dtype.js';",
  '',
];
for (const entry of wanted) {
  const schema = schemas.get(entry);
  if (!schema) throw new Error(`ops.list: no schema aten::${entry} in this libtorch`);
  const { args, ret } = parseSchema(schema);
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
      const conv = toNative(p, v);
      return p.optional && conv !== v ? `${v} === undefined ? undefined : ${conv}` : conv;
    })
    .join(', ');
  const r = retType(ret);
  const [name, overload = ''] = entry.split('.');
  out.push(`let ${idVar} = -1;`);
  out.push(`/** \`${schema.replace(/\*\//g, '* /')}\` */`);
  out.push(`export function ${fnName}(${sig}): ${r.ts} {`);
  out.push(`  if (${idVar} < 0) ${idVar} = native.resolve('aten::${name}', '${overload}');`);
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
console.log(`gen-ops: ${wanted.length} operators -> src/torch/generated/aten.ts`);
