// The synthetic ImageNet-LT-shaped JPEG set the image benchmarks share (tailor data synth-images:
// 20 classes, imbalance 10, photo-sized JPEGs of about 400 x 350 at quality 90), written once per
// size into the temp directory and reused.
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SynthImageSetOptions {
  /** About this many training images, at least (0: 468, 60 in the head class). */
  images?: number;
  /** Validation and test images per class (0: the lists are written empty). */
  valPerClass?: number;
  /** Where progress goes (the set takes seconds to write the first time). */
  log?: ((line: string) => void) | undefined;
}

/** The set's root and training list, written first where it is not there yet. */
export async function synthImageSet(o: SynthImageSetOptions = {}): Promise<{ root: string; list: string }> {
  // 60 images in the head class give 468 in all; more are asked for, so that an epoch outlasts
  // the workers' start on a many-core machine (fewer for smoke runs)
  const maxPerClass = o.images ? Math.max(2, Math.ceil((60 * o.images) / 468)) : 60;
  const val = o.valPerClass ?? 0;
  const root = join(tmpdir(), `tailor-bench-images-c20-m${maxPerClass}${val ? `-v${val}` : ''}-s400x350`);
  const list = join(root, 'ImageNet_LT_train.txt');
  if (!existsSync(list)) {
    const { synthImageList } = await import('../../src/longtail/data/synth-images.js');
    const t0 = Date.now();
    await synthImageList({
      out: root,
      classes: 20,
      imbalance: 10,
      maxPerClass,
      valPerClass: val,
      testPerClass: val,
      width: 400,
      height: 350,
      quality: 90,
    });
    o.log?.(`wrote the synthetic set to ${root} in ${(Date.now() - t0) / 1000} s`);
  }
  return { root, list };
}
