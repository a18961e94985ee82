// Image decoding in the addon, as torchvision.io: a JPEG's crop box decoded by libjpeg-turbo and
// resampled to the output size with PIL's antialiased bilinear filter, in one synchronous call
// (the image-list pipeline runs it on its worker threads). Present where the addon was built with
// libjpeg's headers (native/resolve-jpeg.mjs); jpegDecoder() says whether it is.
import { ArgumentChecks } from '../util/arguments.js';
import { native } from './native.js';

/** A box in an image's pixels. */
export interface PixelBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Whether the addon decodes JPEGs here, and why not. */
export function jpegDecoder(): { available: boolean; reason?: string } {
  try {
    if (typeof native.jpegInfo !== 'function')
      return {
        available: false,
        reason: 'the native addon predates its JPEG decoder; rebuild it (npm run build:native)',
      };
    return native.jpegInfo();
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
}

/**
 * Decodes `box` of a JPEG and resizes it to `width` x `height`: interleaved RGB bytes
 * (height x width x 3), the pixels of PIL's `Image.open(f).convert('RGB').crop(box).resize((width,
 * height), BILINEAR)` within a few levels (libjpeg decodes at 1/2, 1/4 or 1/8 scale when the box
 * is that many times the output). null for a CMYK or YCCK JPEG, which this decoder does not turn
 * into RGB.
 *
 * @throws Error with libjpeg's message for data that is not a JPEG, is corrupt or truncated, or
 *   has more than `maxPixels` pixels or a box outside the image; ArgumentError for a box or size that is not a
 *   positive integer.
 * @example
 * ```ts
 * import { readFileSync } from 'node:fs';
 * import * as torch from 'tailor/torch';
 * const bytes = readFileSync('photo.jpg');
 * if (torch.io.jpegDecoder().available) {
 *   const rgb = torch.io.decodeJpegBox(bytes, { left: 0, top: 0, width: 300, height: 200 }, 224, 224);
 *   console.log(rgb?.length); // 224 * 224 * 3, or undefined for a CMYK JPEG
 * }
 * ```
 */
export function decodeJpegBox(
  bytes: Uint8Array,
  box: PixelBox,
  width: number,
  height: number,
  maxPixels = 100_000_000,
): Uint8Array | null {
  const check = new ArgumentChecks('decodeJpegBox');
  if (!(bytes instanceof Uint8Array)) check.fail('bytes', 'a Uint8Array (or Buffer)', bytes);
  for (const [name, v] of Object.entries({ left: box.left, top: box.top }))
    if (!Number.isInteger(v) || v < 0) check.fail(`box.${name}`, 'an integer >= 0', v);
  // a JPEG's sides are at most 65,535; the output's as the addon bounds them
  for (const [name, v, max] of [
    ['box.width', box.width, 65535],
    ['box.height', box.height, 65535],
    ['width', width, 16384],
    ['height', height, 16384],
  ] as const)
    if (!Number.isInteger(v) || v < 1 || v > max) check.fail(name, `an integer in [1, ${max}]`, v);
  if (typeof native.jpegDecodeBox !== 'function')
    throw new Error(`decodeJpegBox: ${jpegDecoder().reason ?? 'no JPEG decoder in this addon'}`);
  return native.jpegDecodeBox(bytes, box.left, box.top, box.width, box.height, width, height, maxPixels);
}
