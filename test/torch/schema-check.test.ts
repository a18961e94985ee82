import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../../src/torch/index.js';
import {
  assertOpSchemas,
  checkOpSchemas,
  compareSchemas,
  OpSchemaMismatchError,
} from '../../src/torch/schema-check.js';
import { EXPECTED_SCHEMAS } from '../../src/torch/generated/schemas.js';

test('every wrapped operator matches the running libtorch', () => {
  const { checked, mismatches } = checkOpSchemas();
  assert.equal(checked, Object.keys(EXPECTED_SCHEMAS).length);
  assert.ok(checked > 200);
  assert.deepEqual(mismatches, []);
});

test('a moved argument, a changed type, a new required argument or a lost operator is named', () => {
  const altered: Record<string, string> = {
    ...EXPECTED_SCHEMAS,
    // The 1.13 schema with two arguments swapped: calls would pass `other` as `self`.
    'sub.Tensor': 'aten::sub.Tensor(Tensor other, Tensor self, *, Scalar alpha=1) -> Tensor',
    // A changed type: calls would pass a float where libtorch takes an int list.
    sum: 'aten::sum(Tensor self, *, float dtype=None) -> Tensor',
    'not_an_op.X': 'aten::not_an_op.X(Tensor self) -> Tensor',
  };
  assert.throws(
    () => assertOpSchemas(altered),
    (error: unknown) => {
      assert.ok(error instanceof OpSchemaMismatchError);
      assert.equal(error.name, 'OpSchemaMismatchError');
      const ops = error.mismatches.map((m) => m.op).sort();
      assert.deepEqual(ops, ['not_an_op.X', 'sub.Tensor', 'sum']);
      assert.match(error.message, /sub\.Tensor: argument 0 is 'self' \(Tensor\), was 'other'/);
      assert.match(error.message, /sum: argument 1 'dtype' changed type from float to ScalarType\?/);
      assert.match(error.message, /not_an_op\.X: the operator does not exist/);
      assert.match(error.message, /node scripts\/gen-ops\.mjs/);
      return true;
    },
  );
});

test('compatible changes pass: SymInt for int, new trailing defaulted arguments, alias annotations', () => {
  assert.equal(
    compareSchemas(
      'aten::view(Tensor(a) self, int[] size) -> Tensor(a)',
      'aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)',
    ),
    null,
  );
  assert.equal(
    compareSchemas(
      'aten::f(Tensor self, int dim) -> Tensor',
      'aten::f(Tensor self, int dim, *, bool fast=False, ScalarType? dtype=None) -> Tensor',
    ),
    null,
  );
  // torch 2.x: std/var take a Scalar correction where 1.13 took an int.
  assert.equal(
    compareSchemas(
      'aten::std.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor',
      'aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor',
    ),
    null,
  );
  assert.match(
    compareSchemas('aten::f(Tensor self, Scalar? k) -> Tensor', 'aten::f(Tensor self, int? k) -> Tensor') ??
      '',
    /changed type from Scalar\? to int\?/,
  );
  assert.match(
    compareSchemas('aten::f(Tensor self, int? k) -> Tensor', 'aten::f(Tensor self, int k) -> Tensor') ?? '',
    /changed type from int\? to int/,
  );
  assert.match(
    compareSchemas(
      'aten::f(Tensor self, int dim) -> Tensor',
      'aten::f(Tensor self, int dim, int k) -> Tensor',
    ) ?? '',
    /new required argument 2 'k'/,
  );
  assert.match(
    compareSchemas('aten::f(Tensor self) -> Tensor', 'aten::f(Tensor self) -> (Tensor, Tensor)') ?? '',
    /returns \(Tensor, Tensor\), was \(Tensor\)/,
  );
  assert.match(
    compareSchemas('aten::f(Tensor self, int dim=0) -> Tensor', 'aten::f(Tensor self, int dim) -> Tensor') ??
      '',
    /lost its default/,
  );
});

test('under a libtorch of another version, only the changed operators are refused, each by name when called', async () => {
  const { checkOpSchemasAtStartup, refuseMismatchedOp } = await import('../../src/torch/schema-check.js');
  const { native } = await import('../../src/torch/native.js');
  const altered: Record<string, string> = {
    ...EXPECTED_SCHEMAS,
    'sub.Tensor': 'aten::sub.Tensor(Tensor other, Tensor self, *, Scalar alpha=1) -> Tensor',
  };
  const warnings: string[] = [];
  const onWarning = (w: Error & { code?: string }) => warnings.push(`${w.code}: ${w.message}`);
  process.on('warning', onWarning);
  const before = process.env.TAILOR_SCHEMA_CHECK;
  delete process.env.TAILOR_SCHEMA_CHECK;
  try {
    checkOpSchemasAtStartup(altered, '2.99.0');
    await new Promise((r) => setImmediate(r));
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      /^TAILOR_SCHEMA_MISMATCH: libtorch 2\.99\.0: 1 of the wrapped operators changed their call layout .*\(sub\.Tensor\)/,
    );
    assert.throws(
      () => native.resolve('aten::sub', 'Tensor'),
      (e: unknown) =>
        e instanceof OpSchemaMismatchError &&
        /sub\.Tensor: argument 0 is 'self' \(Tensor\), was 'other'/.test(e.message),
    );
    assert.doesNotThrow(() => refuseMismatchedOp('aten::add', 'Tensor'));
    assert.ok(native.resolve('aten::add', 'Tensor') >= 0, 'the other operators still resolve');
    // TAILOR_SCHEMA_CHECK=1 refuses the whole engine instead.
    process.env.TAILOR_SCHEMA_CHECK = '1';
    assert.throws(() => checkOpSchemasAtStartup(altered, '2.99.0'), OpSchemaMismatchError);
  } finally {
    if (before === undefined) delete process.env.TAILOR_SCHEMA_CHECK;
    else process.env.TAILOR_SCHEMA_CHECK = before;
    process.off('warning', onWarning);
    checkOpSchemasAtStartup(EXPECTED_SCHEMAS, '2.99.0');
  }
  assert.doesNotThrow(() => native.resolve('aten::sub', 'Tensor'), 'a clean check lifts the refusals');
});
