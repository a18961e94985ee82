// The addon's JPEG decoder against a reference: the whole image decoded by sharp (the same
// libjpeg-turbo), cut and resized here with PIL's bilinear filter written out in full.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import * as torch from '../../src/torch/index.js';
import { ArgumentError } from '../../src/util/arguments.js';

const available = torch.io.jpegDecoder().available;
const skip = available ? false : `no JPEG decoder in this addon: ${torch.io.jpegDecoder().reason}`;

/** A smooth photo-like test image (gradients and a ring), w x h RGB bytes. */
function picture(w: number, h: number): Uint8Array {
  const rgb = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const r = Math.hypot(x - w / 2, y - h / 3);
      rgb.set([(255 * x) / w, (255 * y) / h, 128 + 100 * Math.sin(r / 9)], 3 * (y * w + x));
    }
  return rgb;
}

async function jpeg(w: number, h: number, o: { grey?: boolean; cmyk?: boolean } = {}): Promise<Buffer> {
  let img = sharp(Buffer.from(picture(w, h)), { raw: { width: w, height: h, channels: 3 } });
  if (o.grey) img = img.grayscale();
  if (o.cmyk) img = img.toColourspace('cmyk');
  return img.jpeg({ quality: 92 }).toBuffer();
}

/** PIL's Image.resize(size, BILINEAR, box) on interleaved RGB, in doubles, rounded per pass. */
function pilResize(src: Uint8Array, w: number, h: number, box: torch.io.PixelBox, ow: number, oh: number) {
  const coeffs = (inSize: number, in0: number, in1: number, out: number) => {
    const scale = (in1 - in0) / out;
    const fs = Math.max(scale, 1);
    return Array.from({ length: out }, (_, o) => {
      const center = in0 + (o + 0.5) * scale;
      const lo = Math.max(Math.trunc(center - fs + 0.5), 0);
      const hi = Math.min(Math.trunc(center + fs + 0.5), inSize);
      const ws = Array.from({ length: hi - lo }, (_, i) =>
        Math.max(0, 1 - Math.abs((i + lo - center + 0.5) / fs)),
      );
      const total = ws.reduce((a, b) => a + b, 0);
      return { lo, ws: ws.map((v) => v / total) };
    });
  };
  const round = (v: number) => Math.min(255, Math.max(0, Math.floor(v + 0.5)));
  const cx = coeffs(w, box.left, box.left + box.width, ow);
  const cy = coeffs(h, box.top, box.top + box.height, oh);
  const mid = new Uint8Array(h * ow * 3);
  for (let y = 0; y < h; y++)
    for (let o = 0; o < ow; o++)
      for (let c = 0; c < 3; c++)
        mid[(y * ow + o) * 3 + c] = round(
          cx[o]!.ws.reduce((a, wi, i) => a + wi * src[(y * w + cx[o]!.lo + i) * 3 + c]!, 0),
        );
  const out = new Uint8Array(oh * ow * 3);
  for (let o = 0; o < oh; o++)
    for (let x = 0; x < ow * 3; x++)
      out[o * ow * 3 + x] = round(
        cy[o]!.ws.reduce((a, wi, i) => a + wi * mid[(cy[o]!.lo + i) * ow * 3 + x]!, 0),
      );
  return out;
}

function diff(a: Uint8Array, b: Uint8Array) {
  assert.equal(a.length, b.length);
  let max = 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    max = Math.max(max, d);
    sum += d;
  }
  return { max, mean: sum / a.length };
}

test(
  'decodeJpegBox: a box cut and resized as PIL does, at full scale and shrunk on load',
  { skip },
  async () => {
    const [w, h] = [400, 300];
    const bytes = await jpeg(w, h);
    const full = new Uint8Array((await sharp(bytes).raw().toBuffer()).buffer.slice(0));
    // a box near the output size (decoded at full scale), one that is not square, a whole-image
    // box 3.5x the output (decoded at 1/2) and one 8x (decoded at 1/8)
    const cases: [torch.io.PixelBox, number, number, number][] = [
      [{ left: 37, top: 21, width: 250, height: 230 }, 224, 224, 1],
      [{ left: 0, top: 100, width: 133, height: 200 }, 96, 160, 1],
      [{ left: 0, top: 0, width: 400, height: 300 }, 112, 84, 4],
      [{ left: 8, top: 16, width: 384, height: 256 }, 48, 32, 8],
    ];
    for (const [box, ow, oh, meanBound] of cases) {
      const got = torch.io.decodeJpegBox(bytes, box, ow, oh)!;
      const want = pilResize(full, w, h, box, ow, oh);
      const d = diff(got, want);
      // at full scale the pixels are the reference's up to rounding; shrinking in the DCT differs
      // from decoding all pixels and averaging them by a few levels on this smooth picture
      assert.ok(
        d.mean <= meanBound && d.max <= 40,
        `${JSON.stringify(box)} -> ${ow}x${oh}: ${JSON.stringify(d)}`,
      );
      if (meanBound === 1) assert.ok(d.max <= 3, `full scale: ${JSON.stringify(d)}`);
    }
  },
);

test('decodeJpegBox: greyscale comes back as RGB; CMYK is left to the caller (null)', { skip }, async () => {
  const grey = torch.io.decodeJpegBox(
    await jpeg(64, 48, { grey: true }),
    { left: 0, top: 0, width: 64, height: 48 },
    32,
    24,
  )!;
  assert.equal(grey.length, 32 * 24 * 3);
  for (let p = 0; p < 32 * 24; p++)
    assert.ok(grey[3 * p] === grey[3 * p + 1] && grey[3 * p] === grey[3 * p + 2]);
  assert.equal(
    torch.io.decodeJpegBox(
      await jpeg(64, 48, { cmyk: true }),
      { left: 0, top: 0, width: 64, height: 48 },
      32,
      24,
    ),
    null,
  );
});

test(
  'decodeJpegBox: corrupt, truncated, oversized and out-of-box input are errors naming the cause',
  { skip },
  async () => {
    const bytes = await jpeg(200, 160);
    const box = { left: 0, top: 0, width: 200, height: 160 };
    assert.throws(
      () => torch.io.decodeJpegBox(new TextEncoder().encode('not a JPEG at all'), box, 32, 32),
      /JPEG: Not a JPEG file/,
    );
    assert.throws(
      () => torch.io.decodeJpegBox(bytes.subarray(0, bytes.length / 2), box, 32, 32),
      /truncated/,
    );
    assert.throws(() => torch.io.decodeJpegBox(bytes, box, 32, 32, 1000), /more than the limit/);
    assert.throws(() => torch.io.decodeJpegBox(bytes, { ...box, left: 1 }, 32, 32), /outside the image/);
    for (const bad of [
      { ...box, width: 0 },
      { ...box, left: -1 },
      { ...box, top: 1.5 },
    ])
      assert.throws(() => torch.io.decodeJpegBox(bytes, bad, 32, 32), ArgumentError);
    assert.throws(() => torch.io.decodeJpegBox(bytes, box, 0, 32), /decodeJpegBox: width must be/);
    assert.throws(
      () => torch.io.decodeJpegBox(bytes, box, 32, 20_000),
      /height must be an integer in \[1, 16384\]/,
    );
    assert.throws(
      () => torch.io.decodeJpegBox('x' as unknown as Uint8Array, box, 8, 8),
      /bytes must be a Uint8Array/,
    );
  },
);

test(
  'decodeJpegBox: a progressive JPEG of more than 500 scans is refused, not decoded for minutes',
  { skip },
  async () => {
    const [w, h] = [64, 48];
    const jpg = await sharp(Buffer.from(picture(w, h)), { raw: { width: w, height: h, channels: 3 } })
      .jpeg({ quality: 90, progressive: true })
      .toBuffer();
    // its last scan (from the last SOS marker to EOI) repeated 600 times
    let last = -1;
    for (let i = 2; i < jpg.length - 1; i++) if (jpg[i] === 0xff && jpg[i + 1] === 0xda) last = i;
    const scan = jpg.subarray(last, jpg.length - 2);
    const flood = Buffer.concat([
      jpg.subarray(0, jpg.length - 2),
      ...Array<Buffer>(600).fill(scan),
      Buffer.from([0xff, 0xd9]),
    ]);
    const box = { left: 0, top: 0, width: w, height: h };
    assert.equal(torch.io.decodeJpegBox(jpg, box, 32, 24)!.length, 32 * 24 * 3, 'the original decodes');
    const tenScans = Buffer.concat([
      jpg.subarray(0, jpg.length - 2),
      ...Array<Buffer>(10).fill(scan),
      Buffer.from([0xff, 0xd9]),
    ]);
    assert.equal(
      torch.io.decodeJpegBox(tenScans, box, 32, 24)!.length,
      32 * 24 * 3,
      'a few repeated scans decode',
    );
    assert.throws(() => torch.io.decodeJpegBox(flood, box, 32, 24), /more than 500 scans/);
  },
);

test('jpegDecoder: says whether this addon decodes JPEGs, and why not', () => {
  const info = torch.io.jpegDecoder();
  assert.equal(typeof info.available, 'boolean');
  if (!info.available) assert.match(info.reason ?? '', /libjpeg|rebuild|engine/);
});
