// PyTorch's own files (torch.save): pretrained weights that exist only as .pth/.pt. Two
// containers hold the same pickle:
//  - zip (the default since PyTorch 1.6): <name>/data.pkl, the pickle, whose persistent ids
//    ('storage', torch.FloatStorage, key, location, numel) name the entries <name>/data/<key>,
//    each a storage's raw bytes; <name>/byteorder ('little' or 'big', absent before 1.13.1 and
//    then little) and <name>/version. Entries are stored, but deflated ones are read too.
//  - legacy (PyTorch < 1.6, or _use_new_zipfile_serialization=False): five pickles in a row
//    (magic number, protocol version, sys_info, the object, the sorted storage keys), then each
//    storage as an 8-byte little-endian element count and its little-endian bytes.
// The pickle is read by the safe host of pytorch-pickle.ts; the tensors are cut out of the
// storages by pytorch-tensors.ts.
import { readFileSync } from 'node:fs';
import { unzipSync } from 'fflate';
import type { Tensor } from './tensor.js';
import { checkDevice, type DeviceLike } from './device.js';
import { PytorchFileError, UserError } from '../util/errors.js';
import { runPickle } from '../util/pickle.js';
import { torchPickleHost, type StorageRef } from './pytorch-pickle.js';
import { flattenCheckpoint, type PytorchValue } from './pytorch-tensors.js';
import { corruptEntry } from './zip-checksums.js';

export { PytorchFileError } from '../util/errors.js';
export type { PytorchValue } from './pytorch-tensors.js';

/** Options of loadPytorchFile and loadPytorchCheckpoint. */
export interface LoadPytorchOptions {
  /**
   * Only the entries under this dotted path, with the path and its dot taken off their names:
   * `'state_dict'` turns `state_dict.0.weight` into `0.weight`, `'module'` takes off the prefix
   * torch.nn.DataParallel adds. An error names the top-level keys when nothing lies under it.
   */
  prefix?: string;
  /** Where the tensors go (torch.load's map_location): 'cpu' (default), 'cuda', 'cuda:N'. */
  mapLocation?: DeviceLike;
  /**
   * The bytes the tensors (and deflated zip entries) may take in all; default 4 times the file's
   * size plus 64 MiB. Views can ask for more than a file holds (an expanded tensor, one tensor
   * under many names); this bounds what a hostile file can make the reader allocate.
   */
  maxBytes?: number;
  /**
   * Skip Python objects of other classes than a state dict's (a trainer's config object, an
   * argparse.Namespace) instead of refusing the file: they are never run, whatever they hold is
   * left out, and {@link PytorchCheckpoint.skipped} lists where they were. Default false.
   */
  skipObjects?: boolean;
}

/** What a PyTorch file holds: its tensors and its other values, each under its dotted path. */
export interface PytorchCheckpoint {
  /** Every tensor, by its dotted path (owned by the caller: dispose them, or load them into a model and dispose). */
  tensors: Map<string, Tensor>;
  /** Every other leaf (epoch, best accuracy, a config string, an optimizer's hyperparameters), by its dotted path. */
  values: Map<string, PytorchValue>;
  /** With skipObjects: the dotted path of each object skipped, and its Python class. */
  skipped: Map<string, string>;
  /** The container: 'zip' (PyTorch >= 1.6) or 'legacy'. */
  format: 'zip' | 'legacy';
}

/** The legacy format's first pickle: torch.serialization's MAGIC_NUMBER. */
const LEGACY_MAGIC = 0x1950a86a20f9469cfc6cn;
const REMEDY =
  're-save it in PyTorch with torch.save(model.state_dict(), path), or convert it to safetensors';

/**
 * Reads the tensors of a file written by PyTorch's torch.save (a .pth or .pt holding a state dict,
 * or a training checkpoint that nests one), in the zip format or the legacy one, without running
 * any Python: the names are dotted paths through the nesting (`state_dict.0.weight` for
 * `{'state_dict': {...}}`; pass `prefix: 'state_dict'` for `0.weight`). A file holding a single
 * tensor gives it under the name ''. Tensors keep their dtype (float32, float64, float16,
 * bfloat16, int64, int32, int16, int8, uint8, bool), sizes and values; views (transposed,
 * sliced, sharing a storage) become contiguous tensors of their own.
 *
 * @throws PytorchFileError naming the file and what is wrong: not a PyTorch file, truncated or
 *   corrupt (a zip entry's checksum included), a Python global other than a state dict's (a model
 *   object saved whole, os.system, a trainer's config object), which is refused and never called
 *   (`skipObjects` leaves such objects out instead), or tensors that need more than `maxBytes`.
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const model = new torch.nn.Sequential(new torch.nn.Linear(4, 3), new torch.nn.ReLU(), new torch.nn.Linear(3, 2));
 * const weights = torch.loadPytorchFile('mlp.pth');
 * model.loadStateDict(Object.fromEntries(weights));
 * torch.dispose([...weights.values()]);
 * ```
 */
export function loadPytorchFile(path: string, options: LoadPytorchOptions = {}): Map<string, Tensor> {
  return loadPytorchCheckpoint(path, options).tensors;
}

/**
 * Reads a PyTorch file as {@link loadPytorchFile} does, with the values that are not tensors
 * (epoch, best accuracy, the optimizer's learning rate) under their dotted paths: numbers
 * (bigints beyond 2^53), strings, booleans, null for None and Uint8Arrays for bytes; numpy
 * scalars become numbers. Lists and tuples count as nesting (`milestones.0`), as dicts do.
 *
 * @throws PytorchFileError as loadPytorchFile.
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 * const ck = torch.loadPytorchCheckpoint('checkpoint.pth', { prefix: 'state_dict' });
 * console.log(ck.format, ck.values.get('epoch'), [...ck.tensors.keys()]);
 * torch.dispose([...ck.tensors.values()]);
 * ```
 */
export function loadPytorchCheckpoint(path: string, options: LoadPytorchOptions = {}): PytorchCheckpoint {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new PytorchFileError(`cannot read PyTorch file ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return decodePytorchFile(bytes, path, options);
}

/** Decodes the bytes of a PyTorch file; `source` names it in errors. See {@link loadPytorchCheckpoint}. */
export function decodePytorchFile(
  bytes: Uint8Array,
  source = '<buffer>',
  options: LoadPytorchOptions = {},
): PytorchCheckpoint {
  const fail = (why: string): never => {
    throw new PytorchFileError(`${source}: cannot read this PyTorch file: ${why}; ${REMEDY}`);
  };
  const pickleFail = (why: string, at: number): never => fail(`${why} (pickle byte ${at})`);
  const maxBytes = options.maxBytes ?? 4 * bytes.length + 64 * 2 ** 20;
  const device = checkDevice(options.mapLocation ?? 'cpu');
  const storages = new Map<string, StorageRef>();
  const host = torchPickleHost(pickleFail, storages, options.skipObjects === true);
  let root: unknown;
  let storageBytes: (key: string) => Uint8Array;
  let bigEndian = false;
  const format = bytes[0] === 0x50 && bytes[1] === 0x4b ? 'zip' : 'legacy';
  if (format === 'zip') {
    const archive = readArchive(bytes, maxBytes, fail);
    bigEndian = archive.byteorder === 'big';
    root = runPickle(archive.pickle, host, { fail: pickleFail }).value;
    storageBytes = (key) =>
      archive.records.get(`data/${key}`) ?? fail(`storage '${key}' has no entry data/${key} in the archive`);
  } else {
    if (bytes[0] !== 0x80)
      fail(
        bytes.length === 0
          ? 'the file is empty'
          : 'it is neither a zip archive nor a pickle (not written by torch.save; a tar archive from PyTorch < 0.4 is not read)',
      );
    const legacy = readLegacy(bytes, host, pickleFail, storages, fail);
    root = legacy.root;
    storageBytes = (key) => legacy.storages.get(key) ?? fail(`storage '${key}' is not in the file`);
  }
  try {
    const { tensors, values, skipped } = flattenCheckpoint(root, {
      storageBytes,
      bigEndian,
      device,
      maxBytes,
      maxVisits: 4 * bytes.length + 1024,
      ...(options.prefix !== undefined ? { prefix: options.prefix } : {}),
      fail,
    });
    if (options.prefix && tensors.size === 0 && values.size === 0 && skipped.size === 0) {
      const top = root instanceof Map ? [...root.keys()].slice(0, 20).join(', ') : '(not a dict)';
      throw new PytorchFileError(
        `${source}: nothing lies under '${options.prefix}' (its top-level keys: ${top}); pass one of them as prefix, or none`,
      );
    }
    return { tensors, values, skipped, format };
  } catch (error) {
    if (error instanceof UserError) throw error;
    // the engine refusing a tensor (an unknown device) is named with the file
    throw new PytorchFileError(`${source}: reading the tensors failed: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The zip container's pickle, storage entries (by their path below the archive's folder) and byte order. */
function readArchive(
  bytes: Uint8Array,
  maxBytes: number,
  fail: (why: string) => never,
): { pickle: Uint8Array; records: Map<string, Uint8Array>; byteorder: string } {
  const names: string[] = [];
  let expanded = 0;
  let files: Record<string, Uint8Array>;
  const wanted = /^[^/]+\/(data\.pkl|byteorder|data\/[^/]+)$/;
  const sizes = new Map<string, number>();
  try {
    files = unzipSync(bytes, {
      filter: (entry) => {
        // a central directory record takes at least 46 bytes; more entries than fit is corruption
        if (names.push(entry.name) > bytes.length / 46)
          fail('the zip directory lists more entries than the file can hold');
        if (!wanted.test(entry.name)) return false;
        if (entry.compression !== 0 && entry.compression !== 8)
          fail(
            `entry ${entry.name} uses zip compression method ${entry.compression} (only stored and deflated are read)`,
          );
        if (entry.compression === 0 && (entry.size !== entry.originalSize || entry.size > bytes.length))
          fail(
            `entry ${entry.name} declares ${entry.originalSize} bytes, more than the file holds (truncated?)`,
          );
        if (entry.compression === 8) {
          expanded += entry.originalSize;
          if (expanded > maxBytes)
            fail(
              `its deflated entries expand to more than ${maxBytes} bytes; pass a larger maxBytes if the file is trusted`,
            );
        }
        sizes.set(entry.name, entry.originalSize);
        return true;
      },
    });
  } catch (error) {
    if (error instanceof PytorchFileError) throw error;
    return fail(`it is not a readable zip archive (${(error as Error).message}; truncated?)`);
  }
  const corrupt = corruptEntry(bytes, files);
  if (corrupt !== undefined)
    fail(
      `entry ${corrupt} does not match the checksum the archive states for it (corrupt or truncated file)`,
    );
  const pkl = names.filter((n) => /^[^/]+\/data\.pkl$/.test(n));
  if (pkl.length !== 1)
    fail(
      pkl.length === 0
        ? 'the zip archive has no <name>/data.pkl (not written by torch.save)'
        : 'the zip archive has several data.pkl entries',
    );
  const folder = pkl[0]!.slice(0, -'data.pkl'.length);
  if (names.some((n) => n === `${folder}constants.pkl` || n.startsWith(`${folder}code/`)))
    fail(
      'it is a TorchScript archive (torch.jit.save), whose code is not run here; load it in PyTorch and save its state_dict()',
    );
  const records = new Map<string, Uint8Array>();
  for (const [name, data] of Object.entries(files)) {
    if (!name.startsWith(folder)) continue;
    if (data.length !== sizes.get(name))
      fail(`entry ${name} holds ${data.length} of its ${sizes.get(name)} bytes (truncated or corrupt file)`);
    records.set(name.slice(folder.length), data);
  }
  const order = records.get('byteorder');
  const byteorder = order ? Buffer.from(order).toString('latin1') : 'little';
  if (byteorder !== 'little' && byteorder !== 'big')
    fail(`its byteorder entry says '${byteorder.slice(0, 20)}', neither 'little' nor 'big'`);
  return { pickle: records.get('data.pkl')!, records, byteorder };
}

/** The legacy container: the object pickle and each storage's bytes, by key. */
function readLegacy(
  bytes: Uint8Array,
  host: ReturnType<typeof torchPickleHost>,
  pickleFail: (why: string, at: number) => never,
  declared: Map<string, StorageRef>,
  fail: (why: string) => never,
): { root: unknown; storages: Map<string, Uint8Array> } {
  const plain = { ...host, persistentLoad: undefined };
  const options = { fail: pickleFail };
  const magic = runPickle(bytes, plain, options);
  if (magic.value !== LEGACY_MAGIC)
    fail('it is a pickle, but not one written by torch.save (no magic number)');
  const protocol = runPickle(bytes, plain, options, magic.end);
  if (protocol.value !== 1001) fail(`its legacy protocol version is ${String(protocol.value)}, not 1001`);
  const sysInfo = runPickle(bytes, plain, options, protocol.end);
  const object = runPickle(bytes, host, options, sysInfo.end);
  const keys = runPickle(bytes, plain, options, object.end);
  if (!Array.isArray(keys.value) || !keys.value.every((k) => typeof k === 'string'))
    fail('its list of storage keys is not a list of strings (corrupt file)');
  const storages = new Map<string, Uint8Array>();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = keys.end;
  for (const key of keys.value as string[]) {
    const ref =
      declared.get(key) ?? fail(`storage '${key}' is listed but no tensor declares it (corrupt file)`);
    if (pos + 8 > bytes.length) fail(`it ends before storage '${key}' (truncated file)`);
    const numel = view.getBigInt64(pos, true);
    pos += 8;
    const need = numel * BigInt(ref.elementBytes);
    if (numel < 0n || need > BigInt(bytes.length - pos))
      fail(
        `storage '${key}' declares ${numel} elements, more than the ${bytes.length - pos} bytes left (truncated file)`,
      );
    storages.set(key, bytes.subarray(pos, pos + Number(need)));
    pos += Number(need);
  }
  return { root: object.value, storages };
}
