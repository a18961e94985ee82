// The PyTorch file targets of the fuzz campaign: files torch.save wrote (the golden files of
// scripts/golden/pytorch_files.py), mutated as a whole (the zip container, the legacy format's
// pickles and storages) or, for the zip format, only in the pickle, which is then zipped again
// with the file's storages so that the mutation reaches the unpickler and the tensor views.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { unzipSync, zipSync } from 'fflate';
import { goldenDir } from '../helpers.js';
import type { Files } from './seeds.js';
import type { FuzzTarget } from './targets.js';

const dir = join(goldenDir, 'torch', 'pth');
const golden = (name: string): Uint8Array => new Uint8Array(readFileSync(join(dir, name)));

/** Pickle opcodes and fragments the mutator inserts: lengths, memo keys, marks, globals, persistent ids. */
const PICKLE_TOKENS = [
  'X\xff\xff\xff\xff',
  'X\xfb\xff\xff\xff',
  '\x8a\x08\xff\xff\xff\xff\xff\xff\xff\x7f',
  '\x8b\xff\xff\xff\x7f',
  'r\xff\xff\xff\xff',
  'j\xff\xff\xff\xff',
  'h\x00',
  'h\x01a',
  '(',
  't',
  'e',
  'a',
  's',
  'u',
  'b',
  'R',
  'Q',
  ')',
  ']',
  '}',
  '.',
  '0',
  '1',
  '2',
  'K\xff',
  'J\xff\xff\xff\xff',
  'ctorch\nFloatStorage\n',
  'ctorch\nLongStorage\n',
  'ctorch._utils\n_rebuild_tensor_v2\n',
  'ccollections\nOrderedDict\n',
  'cnumpy\ndtype\n',
  'cbuiltins\neval\n',
  'cos\nsystem\n',
  '\x95\xff\xff\xff\xff\xff\xff\xff\x7f',
];

/** The zip's entries apart from the pickle, by seed, for re-zipping a mutated pickle. */
function zipped(file: string): { pickle: string; entries: Record<string, Uint8Array> } {
  const entries = unzipSync(golden(file));
  const pickle = Object.keys(entries).find((n) => n.endsWith('/data.pkl'))!;
  return { pickle, entries };
}

/** Loads a file; one refused for an object of another class is loaded again with skipObjects, which must then succeed or name the fault. */
async function load(path: string): Promise<void> {
  const torch = await import('../../src/torch/index.js');
  let ck;
  try {
    ck = torch.loadPytorchCheckpoint(path);
  } catch (error) {
    if (!(error instanceof torch.PytorchFileError) || !error.message.includes('skipObjects')) throw error;
    ck = torch.loadPytorchCheckpoint(path, { skipObjects: true });
  }
  torch.dispose([...ck.tensors.values()]);
}

export function pytorchTargets(): FuzzTarget[] {
  const checkpoint = zipped('checkpoint.pth');
  return [
    {
      name: 'pytorch file (zip)',
      native: true,
      kind: 'binary',
      seeds: async () =>
        ['sequential.pth', 'checkpoint.pth', 'dtypes.pth', 'views.pth', 'views-big.pth', 'objects.pth'].map(
          (f): Files => ({
            'model.pth': golden(f),
          }),
        ),
      mutable: ['model.pth'],
      dictionary: ['PK\x03\x04', 'PK\x01\x02', 'PK\x05\x06', '\xff\xff\xff\xff', 'big', 'little'],
      run: (d) => load(join(d, 'model.pth')),
    },
    {
      name: 'pytorch file (zip, pickle)',
      native: true,
      kind: 'binary',
      seeds: async () => [{ 'data.pkl': checkpoint.entries[checkpoint.pickle]! }],
      mutable: ['data.pkl'],
      dictionary: PICKLE_TOKENS,
      // most inputs are the mutated pickle zipped with the checkpoint's storages
      encode: (mutated, _file, useEncoding) =>
        useEncoding
          ? zipSync({ ...checkpoint.entries, [checkpoint.pickle]: mutated }, { level: 0 })
          : mutated,
      run: (d) => load(join(d, 'data.pkl')),
    },
    {
      name: 'pytorch file (legacy)',
      native: true,
      kind: 'binary',
      seeds: async () =>
        ['sequential-legacy.pth', 'checkpoint-legacy.pth', 'dtypes-legacy.pth', 'views-legacy.pth'].map(
          (f): Files => ({ 'model.pth': golden(f) }),
        ),
      mutable: ['model.pth'],
      dictionary: PICKLE_TOKENS,
      run: (d) => load(join(d, 'model.pth')),
    },
  ];
}
