// The generated operator wrappers pass arguments by position, as the schemas of the libtorch they
// were generated from lay them out. Under another libtorch an argument may have moved or changed
// type; calling through the old layout would then be a wrong call. This module compares every
// wrapped operator's expected schema with the running libtorch's and names each difference.
// It does not import the addon (native.ts runs the start-up check while loading it): native.ts
// registers the addon's loader with setSchemaSource.
import { UserError } from '../util/errors.js';
import { checksOf } from '../util/arguments.js';
import { EXPECTED_SCHEMAS, GENERATED_WITH } from './generated/schemas.js';
import { schemaParts } from './schema-parse.js';

/** The part of the addon the check needs. */
export interface SchemaSource {
  torchVersion: string;
  resolve(name: string, overload: string, boxedOnly?: boolean): number;
  schema(op: number): string;
}

let source: (() => SchemaSource) | undefined;

/** native.ts registers how to get the addon (loading it on first use). */
export function setSchemaSource(getAddon: () => SchemaSource): void {
  source = getAddon;
}

function addon(): SchemaSource {
  if (!source)
    throw new Error('schema check: the libtorch addon is not loaded (import the torch library first)');
  return source();
}

export interface SchemaArg {
  name: string;
  type: string;
  hasDefault: boolean;
}

export interface ParsedSchema {
  name: string;
  args: SchemaArg[];
  returns: string[];
}

/** One operator whose schema in the loaded libtorch differs from the one the bindings were generated from. */
export interface SchemaMismatch {
  op: string;
  reason: string;
  expected: string;
  actual: string | null;
}

export class OpSchemaMismatchError extends UserError {
  constructor(
    readonly mismatches: SchemaMismatch[],
    readonly torchVersion: string,
  ) {
    const lines = mismatches
      .slice(0, 8)
      .map(
        (m) =>
          `  ${m.op}: ${m.reason}\n    generated from: ${m.expected}\n    this libtorch:  ${m.actual ?? '(none)'}`,
      );
    const more = mismatches.length > 8 ? `\n  ... and ${mismatches.length - 8} more` : '';
    super(
      `OpSchemaMismatchError: ${mismatches.length} operator schema(s) of libtorch ${torchVersion} differ from the ` +
        `${GENERATED_WITH} schemas the wrappers were generated from; calls would pass arguments in the wrong ` +
        `places:\n${lines.join('\n')}${more}\nRegenerate the wrappers against this libtorch ` +
        '(node scripts/gen-ops.mjs) or select a matching one (TAILOR_LIBTORCH, then ./scripts/setup.sh).',
    );
  }
}

/**
 * The argument types as the binding converts them: SymInt is passed as int, alias annotations
 * (`Tensor(a!)`) do not change the call.
 */
export function normalizeType(type: string): string {
  return type
    .replace(/\([a-z][^)]*\)/g, '')
    .replace(/\bSymInt\b/g, 'int')
    .trim();
}

export function parseSchema(schema: string): ParsedSchema {
  const parts = schemaParts(schema);
  return {
    name: parts.name,
    args: parts.args.map((a) => ({ ...a, type: normalizeType(a.type) })),
    returns: parts.returns.map(normalizeType),
  };
}

/**
 * Type changes that a call laid out for the old type still makes correctly: the binding converts
 * each JavaScript value by the running schema's type, so a number bound for `int` or `float` is as
 * good a `Scalar`, and any value is as good for the optional form of its type (torch 2.x widened
 * `std`/`var`'s `correction` from `int?` to `Scalar?`).
 */
function isWidening(from: string, to: string): boolean {
  const base = (t: string): string => (t.endsWith('?') ? t.slice(0, -1) : t);
  if (from.endsWith('?') && !to.endsWith('?')) return false;
  const a = base(from);
  const b = base(to);
  return a === b || (b === 'Scalar' && (a === 'int' || a === 'float'));
}

/**
 * Why a call laid out for `expected` would be wrong under `actual`, or null when it is right.
 * New trailing arguments with defaults are compatible (the wrappers leave them to their defaults).
 */
export function compareSchemas(expected: string, actual: string): string | null {
  const e = parseSchema(expected);
  const a = parseSchema(actual);
  for (let i = 0; i < e.args.length; i++) {
    const x = e.args[i]!;
    const y = a.args[i];
    if (!y) return `argument ${i} '${x.name}' (${x.type}) was removed`;
    if (x.name !== y.name) return `argument ${i} is '${y.name}' (${y.type}), was '${x.name}' (${x.type})`;
    if (x.type !== y.type && !isWidening(x.type, y.type))
      return `argument ${i} '${x.name}' changed type from ${x.type} to ${y.type}`;
    if (x.hasDefault && !y.hasDefault && !y.type.endsWith('?'))
      return `argument ${i} '${x.name}' lost its default value`;
  }
  for (let i = e.args.length; i < a.args.length; i++) {
    const y = a.args[i]!;
    if (!y.hasDefault && !y.type.endsWith('?')) return `new required argument ${i} '${y.name}' (${y.type})`;
  }
  if (e.returns.join(', ') !== a.returns.join(', '))
    return `returns (${a.returns.join(', ')}), was (${e.returns.join(', ')})`;
  return null;
}

/** Compares every wrapped operator (or the given expectations) with the running libtorch. */
export function checkOpSchemas(expected: Readonly<Record<string, string>> = EXPECTED_SCHEMAS): {
  checked: number;
  mismatches: SchemaMismatch[];
} {
  const mismatches: SchemaMismatch[] = [];
  checksOf('tailor: checkOpSchemas').object(expected, 'expected');
  for (const [op, schema] of Object.entries(expected)) {
    const [name, overload = ''] = op.split('.');
    let actual: string | null = null;
    try {
      actual = addon().schema(addon().resolve(`aten::${name}`, overload, true));
    } catch {
      mismatches.push({
        op,
        reason: 'the operator does not exist in this libtorch',
        expected: schema,
        actual,
      });
      continue;
    }
    const reason = compareSchemas(schema, actual);
    if (reason) mismatches.push({ op, reason, expected: schema, actual });
  }
  return { checked: Object.keys(expected).length, mismatches };
}

/** Throws OpSchemaMismatchError naming every wrapped operator whose call layout changed. */
export function assertOpSchemas(expected?: Readonly<Record<string, string>>): number {
  const { checked, mismatches } = checkOpSchemas(expected);
  if (mismatches.length > 0) throw new OpSchemaMismatchError(mismatches, addon().torchVersion);
  return checked;
}

/** The operators whose call layout differs in the running libtorch, refused when called. */
let refused: Map<string, SchemaMismatch> | null = null;
let refusedBy = '';

/**
 * At start-up: a libtorch of the version the wrappers were generated from has their schemas, any
 * other is checked once. An operator whose layout changed is refused when it is called (an
 * OpSchemaMismatchError naming it), so that a difference in one operator leaves the others usable;
 * one warning line says how many differ. TAILOR_SCHEMA_CHECK=1 checks even the generating version
 * and refuses the whole engine on any difference; =0 skips the check. The arguments are for tests
 * (other expectations, another version).
 */
export function checkOpSchemasAtStartup(
  expected: Readonly<Record<string, string>> = EXPECTED_SCHEMAS,
  torchVersion: string = addon().torchVersion,
): void {
  refused = null;
  const flag = process.env.TAILOR_SCHEMA_CHECK;
  if (flag === '0') return;
  if (flag !== '1' && torchVersion === GENERATED_WITH) return;
  const { mismatches } = checkOpSchemas(expected);
  if (mismatches.length === 0) return;
  if (flag === '1') throw new OpSchemaMismatchError(mismatches, torchVersion);
  refused = new Map(mismatches.map((m) => [m.op, m]));
  refusedBy = torchVersion;
  const named = mismatches.slice(0, 4).map((m) => m.op);
  process.emitWarning(
    `libtorch ${torchVersion}: ${mismatches.length} of the wrapped operators changed their call layout since ` +
      `${GENERATED_WITH} (${named.join(', ')}${mismatches.length > named.length ? ', ...' : ''}); each is refused ` +
      'when called, the others work (`tailor version --check` lists them)',
    { code: 'TAILOR_SCHEMA_MISMATCH' },
  );
}

/**
 * Throws the OpSchemaMismatchError of `aten::name.overload` when the start-up check found its
 * layout changed in the running libtorch (the generated wrappers resolve operators through this).
 */
export function refuseMismatchedOp(name: string, overload: string): void {
  if (refused === null) return;
  const op = `${name.startsWith('aten::') ? name.slice(6) : name}${overload ? `.${overload}` : ''}`;
  const mismatch = refused.get(op);
  if (mismatch) throw new OpSchemaMismatchError([mismatch], refusedBy);
}
