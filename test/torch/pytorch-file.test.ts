// Reading torch.save files against files PyTorch 1.13 wrote (test/golden/torch/pth, from
// scripts/golden/pytorch_files.py): every tensor's dtype, shape and values exactly, the values
// that are not tensors, a model loaded from its state dict, and the refusals (forbidden
// globals, truncated and corrupt files) by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import * as torch from '../../src/torch/index.js';
import { PytorchFileError } from '../../src/util/errors.js';
import { goldenDir } from '../helpers.js';

const dir = join(goldenDir, 'torch', 'pth');

interface Described {
  dtype: torch.DType;
  shape: number[];
  values: (number | string | boolean)[];
}
const golden = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
  files: Record<string, { tensors: Record<string, Described>; values: Record<string, unknown> }>;
  model: { input: Described; output: Described };
};

/** A golden value as the reader gives it: int64 digits as bigints, infinities as numbers. */
function expectedValue(dtype: torch.DType, v: number | string | boolean): unknown {
  if (dtype === 'int64') return BigInt(v as string);
  if (dtype === 'bool') return v ? 1 : 0;
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  return v;
}

function assertTensor(t: torch.Tensor, want: Described, name: string): void {
  assert.equal(t.dtype, want.dtype, `${name}: dtype`);
  assert.deepEqual(t.shape, want.shape, `${name}: shape`);
  const got = Array.from(t.toArray() as ArrayLike<number | bigint>);
  assert.deepEqual(
    got.map((v) => (Object.is(v, -0) ? '-0' : v)),
    want.values.map((v) => expectedValue(want.dtype, v)).map((v) => (Object.is(v, -0) ? '-0' : v)),
    `${name}: values`,
  );
}

for (const [file, want] of Object.entries(golden.files)) {
  test(`PyTorch file ${file}: every tensor's dtype, shape and values, and the other values`, () => {
    // objects.pth holds objects of other classes, which the expected values leave out
    const ck = torch.loadPytorchCheckpoint(join(dir, file), { skipObjects: file === 'objects.pth' });
    try {
      assert.equal(ck.format, file.includes('legacy') ? 'legacy' : 'zip');
      assert.deepEqual(
        [...ck.tensors.keys()],
        Object.keys(want.tensors).sort(byOrder([...ck.tensors.keys()])),
      );
      for (const [name, t] of ck.tensors) assertTensor(t, want.tensors[name]!, `${file} ${name}`);
      assert.deepEqual(
        Object.fromEntries(ck.values),
        Object.fromEntries(Object.entries(want.values).map(([k, v]) => [k, plainValue(v)])),
      );
    } finally {
      torch.dispose([...ck.tensors.values()]);
    }
  });
}

/** A golden non-tensor value as the reader gives it: {int: digits} as a bigint, {bytes: hex} as bytes. */
function plainValue(v: unknown): unknown {
  if (v !== null && typeof v === 'object' && 'int' in v) return BigInt((v as { int: string }).int);
  if (v !== null && typeof v === 'object' && 'bytes' in v)
    return new Uint8Array(Buffer.from((v as { bytes: string }).bytes, 'hex'));
  return v;
}

/** Sorts names as `order` lists them (the file's order; the JSON's keys are sorted). */
function byOrder(order: string[]): (a: string, b: string) => number {
  return (a, b) => order.indexOf(a) - order.indexOf(b);
}

test('a state dict from a .pth loads into a tailor model of the same structure, which computes what PyTorch did', () => {
  for (const file of ['sequential.pth', 'sequential-legacy.pth', 'sequential-protocol4.pth']) {
    const model = new torch.nn.Sequential(
      new torch.nn.Linear(4, 3),
      new torch.nn.ReLU(),
      new torch.nn.Linear(3, 2),
    );
    const weights = torch.loadPytorchFile(join(dir, file));
    const result = model.loadStateDict(Object.fromEntries(weights));
    assert.deepEqual(result, { missing: [], unexpected: [] });
    torch.dispose([...weights.values()]);
    torch.tidy(() => {
      const x = torch.tensor(golden.model.input.values as number[], { shape: golden.model.input.shape });
      const y = [...(model.forward(x).toArray() as Float32Array)];
      const want = golden.model.output.values as number[];
      // the same float32 operations as PyTorch's: equal to rounding of the last bit at most
      y.forEach((v, i) => assert.ok(Math.abs(v - want[i]!) <= 1e-6 * Math.max(1, Math.abs(want[i]!)), file));
    });
    model.dispose();
  }
});

test('prefix takes a nested state dict out of a training checkpoint, and names the top-level keys when wrong', () => {
  const sd = torch.loadPytorchFile(join(dir, 'checkpoint.pth'), { prefix: 'state_dict' });
  assert.deepEqual([...sd.keys()], ['0.weight', '0.bias', '2.weight', '2.bias']);
  torch.dispose([...sd.values()]);
  const ck = torch.loadPytorchCheckpoint(join(dir, 'checkpoint-legacy.pth'), {
    prefix: 'optimizer.param_groups.0',
  });
  assert.equal(ck.tensors.size, 0);
  assert.equal(ck.values.get('lr'), 0.1);
  assert.throws(
    () => torch.loadPytorchFile(join(dir, 'checkpoint.pth'), { prefix: 'model' }),
    (e: unknown) =>
      e instanceof PytorchFileError &&
      /nothing lies under 'model' \(its top-level keys: state_dict, epoch/.test(e.message),
  );
});

test('a whole nn.Module and an os.system reference are refused by name and never run', () => {
  for (const [file, global] of [
    ['module.pth', 'torch.nn.modules.container.Sequential'],
    ['os-system.pth', 'posix.system'],
  ] as const) {
    assert.throws(
      () => torch.loadPytorchFile(join(dir, file)),
      (e: unknown) =>
        e instanceof PytorchFileError &&
        e.message.includes(join(dir, file)) &&
        e.message.includes(`'${global}'`) &&
        /torch\.save\(model\.state_dict\(\), path\)/.test(e.message),
    );
  }
});

test('a flipped bit in a stored storage fails the archive checksum', () => {
  const bytes = Buffer.from(readFileSync(join(dir, 'sequential.pth')));
  const storage = unzipSync(bytes)['sequential/data/0']!;
  bytes[bytes.indexOf(storage) + 5]! ^= 0x10;
  refuses(bytes, /entry sequential\/data\/0 does not match the checksum/);
});

test("a trainer's config object and argparse.Namespace are refused by name, or skipped and listed on request", () => {
  const file = join(dir, 'objects.pth');
  assert.throws(
    () => torch.loadPytorchFile(file),
    (e: unknown) =>
      e instanceof PytorchFileError && /'argparse\.Namespace'.*pass skipObjects/.test(e.message),
  );
  const ck = torch.loadPytorchCheckpoint(file, { skipObjects: true, prefix: 'state_dict' });
  assert.deepEqual([...ck.tensors.keys()], ['0.weight', '0.bias', '2.weight', '2.bias']);
  assert.deepEqual(ck.skipped, new Map());
  torch.dispose([...ck.tensors.values()]);
  const all = torch.loadPytorchCheckpoint(file, { skipObjects: true });
  assert.deepEqual(
    all.skipped,
    new Map([
      ['args', 'argparse.Namespace'],
      ['config', '__main__.Config'],
    ]),
  );
  torch.dispose([...all.tensors.values()]);
  // a whole model saved with torch.save(model): nothing of it is read, and it is listed
  const whole = torch.loadPytorchCheckpoint(join(dir, 'module.pth'), { skipObjects: true });
  assert.equal(whole.tensors.size, 0);
  assert.deepEqual(whole.skipped, new Map([['', 'torch.nn.modules.container.Sequential']]));
});

test('deflated zip entries read as stored ones do', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'tailor-pth-'));
  try {
    const entries = unzipSync(readFileSync(join(dir, 'views.pth')));
    const deflated = join(tmp, 'views-deflated.pth');
    writeFileSync(deflated, zipSync(entries, { level: 9 }));
    const a = torch.loadPytorchFile(join(dir, 'views.pth'));
    const b = torch.loadPytorchFile(deflated);
    for (const [name, t] of a) assert.deepEqual(b.get(name)!.toArray(), t.toArray(), name);
    torch.dispose([...a.values(), ...b.values()]);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** Asserts that decoding `bytes` fails with a PytorchFileError naming the source and matching `pattern`. */
function refuses(bytes: Uint8Array, pattern: RegExp, options: torch.LoadPytorchOptions = {}): void {
  assert.throws(
    () => torch.decodePytorchFile(bytes, 'bad.pth', options),
    (e: unknown) =>
      e instanceof PytorchFileError && e.message.startsWith('bad.pth: ') && pattern.test(e.message),
  );
}

test('truncated files of both formats end in a named error at every length', () => {
  for (const file of ['checkpoint.pth', 'checkpoint-legacy.pth', 'dtypes-big.pth']) {
    const bytes = readFileSync(join(dir, file));
    for (let n = 0; n < bytes.length; n += 7) refuses(bytes.subarray(0, n), /./);
  }
});

test('corrupt files: not a PyTorch file, storage sizes beyond the file, views beyond the storage, cycles', () => {
  refuses(Buffer.from('hello'), /neither a zip archive nor a pickle/);
  refuses(new Uint8Array(0), /the file is empty/);
  // a plain pickle (not torch.save's): no magic number
  refuses(Buffer.from([0x80, 0x02, 0x4b, 0x01, 0x2e]), /no magic number/);
  // legacy: the last storage's element count made huge
  const legacy = Buffer.from(readFileSync(join(dir, 'sequential-legacy.pth')));
  // the last storage (keys are sorted ids): one of 12, 3, 6 or 2 float32 elements after its count
  const n = [12, 3, 6, 2].find((k) => legacy.readBigInt64LE(legacy.length - 4 * k - 8) === BigInt(k))!;
  legacy.writeBigInt64LE(1n << 40n, legacy.length - 4 * n - 8);
  refuses(legacy, new RegExp(`declares 1099511627776 elements, more than the ${4 * n} bytes left`));
  // zip: a storage entry shorter than its declared elements
  const entries = unzipSync(readFileSync(join(dir, 'sequential.pth')));
  entries['sequential/data/0'] = entries['sequential/data/0']!.subarray(0, 4);
  refuses(zipSync(entries, { level: 0 }), /holds 4 bytes, not the 48 its float32 elements need/);
  // a tensor whose view reaches past its storage: the size of 0.weight (3, 4) made (9, 4)
  const views = unzipSync(readFileSync(join(dir, 'sequential.pth')));
  const pkl = Buffer.from(views['sequential/data.pkl']!);
  const at = pkl.indexOf(Buffer.from([0x4b, 0x03, 0x4b, 0x04, 0x86]));
  pkl[at + 1] = 9;
  views['sequential/data.pkl'] = pkl;
  refuses(
    zipSync(views, { level: 0 }),
    /tensor '0\.weight' \(sizes \[9,4\].*reaches beyond its storage of 12 elements/,
  );
  // a big-endian byteorder that is neither
  const order = unzipSync(readFileSync(join(dir, 'views-big.pth')));
  order['views-big/byteorder'] = Buffer.from('middle');
  refuses(zipSync(order, { level: 0 }), /neither 'little' nor 'big'/);
  // a list that contains itself: PROTO 2, ] q0 h0 a . (the legacy magic first)
  const magic = Buffer.from(
    '80028a0a6c fc9c46f9206a a85019 2e 8002 4de903 2e 8002 7d 2e'.replace(/ /g, ''),
    'hex',
  );
  const cycle = Buffer.concat([
    magic,
    Buffer.from([0x80, 0x02, 0x5d, 0x71, 0x00, 0x68, 0x00, 0x61, 0x2e]),
    Buffer.from([0x80, 0x02, 0x5d, 0x2e]),
  ]);
  refuses(cycle, /nests deeper than 64 levels/);
  // an unknown opcode
  refuses(Buffer.concat([magic, Buffer.from([0x80, 0x02, 0x49, 0x2e])]), /unsupported pickle opcode 0x49/);
});

test('maxBytes bounds what views can ask for beyond the file', () => {
  refuses(readFileSync(join(dir, 'views.pth')), /need more than 40 bytes .*pass a larger maxBytes/, {
    maxBytes: 40,
  });
});

test('legacy storage views (PyTorch before 1.0) and _rebuild_tensor: the view is cut out of its root storage', () => {
  const latin = (s: string): Buffer => Buffer.from(s, 'latin1');
  const str = (s: string): Buffer => {
    const n = Buffer.alloc(4);
    n.writeUInt32LE(s.length);
    return Buffer.concat([latin('X'), n, latin(s)]);
  };
  const pickle = (...parts: Buffer[]): Buffer =>
    Buffer.concat([Buffer.from([0x80, 0x02]), ...parts, latin('.')]);
  const magic = Buffer.from('80028a0a6cfc9c46f9206aa850192e', 'hex');
  // {'a': _rebuild_tensor(('storage', FloatStorage, '0', 'cpu', 4, ('1', 1, 2)), 0, (2,), (1,))}
  const object = pickle(
    latin('}'),
    str('a'),
    latin('ctorch._utils\n_rebuild_tensor\n(('),
    str('storage'),
    latin('ctorch\nFloatStorage\n'),
    str('0'),
    str('cpu'),
    latin('K\x04'),
    str('1'),
    latin('K\x01K\x02\x87tQK\x00K\x02\x85K\x01\x85tRs'),
  );
  const count = Buffer.alloc(8);
  count.writeBigInt64LE(4n);
  const file = Buffer.concat([
    magic,
    pickle(latin('M\xe9\x03')),
    pickle(latin('}')),
    object,
    pickle(latin(']'), str('0'), latin('a')),
    count,
    Buffer.from(new Float32Array([1, 2, 3, 4]).buffer),
  ]);
  const { tensors } = torch.decodePytorchFile(file, 'views.pth');
  assert.deepEqual([...tensors.get('a')!.toArray()], [2, 3]);
  torch.dispose([...tensors.values()]);
});
