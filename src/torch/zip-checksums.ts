// The CRC-32 of each entry of a zip archive, from its central directory. PyTorch's writer puts
// the checksums there only (its local headers defer them to data descriptors), and the zip
// library reads entries without checking them; PyTorch's own reader does check them, so a
// flipped bit in downloaded weights is an error here too, not silently different weights.
import { crc32 } from 'node:zlib';

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;

/** Entry name to CRC-32, read from the central directory; undefined where it cannot be found (the caller then has no checksums to compare). */
function centralChecksums(bytes: Uint8Array): Map<string, number> | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const u32 = (at: number): number => (at >= 0 && at + 4 <= bytes.length ? view.getUint32(at, true) : -1);
  const u16 = (at: number): number => (at >= 0 && at + 2 <= bytes.length ? view.getUint16(at, true) : -1);
  const u64 = (at: number): number =>
    at >= 0 && at + 8 <= bytes.length ? Number(view.getBigUint64(at, true)) : -1;
  // the end record is the last 22 bytes, or fewer than 64 KiB of comment before them
  let end = bytes.length - 22;
  while (end >= 0 && bytes.length - end <= 65557 && u32(end) !== EOCD) end--;
  if (end < 0 || u32(end) !== EOCD) return undefined;
  let count = u16(end + 10);
  let offset = u32(end + 16);
  if (u32(end - 20) === ZIP64_LOCATOR) {
    const z = u64(end - 12);
    if (u32(z) !== ZIP64_EOCD) return undefined;
    count = u64(z + 32);
    offset = u64(z + 48);
  }
  const sums = new Map<string, number>();
  for (let k = 0; k < count; k++) {
    if (u32(offset) !== CENTRAL) return undefined;
    const nameLength = u16(offset + 28);
    if (offset + 46 + nameLength > bytes.length) return undefined;
    const name = Buffer.from(bytes.subarray(offset + 46, offset + 46 + nameLength)).toString('utf8');
    sums.set(name, u32(offset + 16));
    offset += 46 + nameLength + u16(offset + 30) + u16(offset + 32);
  }
  return sums;
}

/** The first entry of `entries` whose CRC-32 differs from the one the archive's directory states, or undefined. */
export function corruptEntry(archive: Uint8Array, entries: Record<string, Uint8Array>): string | undefined {
  const sums = centralChecksums(archive);
  if (!sums) return Object.keys(entries)[0];
  for (const [name, data] of Object.entries(entries)) if (crc32(data) !== sums.get(name)) return name;
  return undefined;
}
