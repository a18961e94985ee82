// `tailor data synth-images`: writes a synthetic ImageNet-LT-shaped image-list data set (JPEGs and
// the train/val/test lists in the official format) for benchmarks and tests without the real data.
import { CliError } from '../errors.js';
import { JSON_OPTION, defineCommand } from '../command.js';
import { numberOr, requiredNumber } from '../args.js';
import { synthImageList } from '../../longtail/index.js';

const HELP = `usage: tailor data synth-images --out DIR [options]

Writes a synthetic long-tailed image-list data set shaped like ImageNet-LT: JPEG files under
DIR/train, DIR/val and DIR/test (photo-like sizes and quality), and the lists
DIR/PREFIX_train.txt, DIR/PREFIX_val.txt, DIR/PREFIX_test.txt of 'relative/path label' lines.
Training counts follow the exponential profile (largest class --max-per-class, smallest
max / --imbalance); val and test are balanced. The same options and --seed give the same files.
The defaults make a small set for tests; ImageNet-LT itself is --classes 1000 --imbalance 256
--max-per-class 1280 --val-per-class 20 --test-per-class 50 --size 400x350. The shipped
ImageNet-LT configs build 1000 classes (arch.args.num_classes): train a smaller set with a copy
whose num_classes is --classes (tailor train warns about classes without training images).

options:
  --out DIR              output directory (the image root of the lists)
  --classes N            number of classes (default 10)
  --imbalance R          n_max / n_min of the training split (default 10)
  --max-per-class N      training images of the largest class (default 20)
  --val-per-class N      validation images per class (default 2)
  --test-per-class N     test images per class (default 2)
  --size WxH             nominal image size; each image varies by +-25% (default 400x350)
  --quality Q            JPEG quality 1..100 (default 90)
  --prefix NAME          list file prefix (default ImageNet_LT)
  --seed N               seed (default 0)
  --json                 print {"lists": {...}, "counts": {...}, "images": N, "bytes": N}
  -h, --help             this text`;

export const synthImagesCommand = defineCommand({
  help: HELP,
  options: {
    out: { type: 'string' },
    classes: { type: 'string' },
    imbalance: { type: 'string' },
    'max-per-class': { type: 'string' },
    'val-per-class': { type: 'string' },
    'test-per-class': { type: 'string' },
    size: { type: 'string', default: '400x350' },
    quality: { type: 'string' },
    prefix: { type: 'string', default: 'ImageNet_LT' },
    seed: { type: 'string' },
    ...JSON_OPTION,
  },
  helpOnParseError: true,
  run: async ({ values }) => {
    if (!values.out) throw new CliError(`--out DIR is required\n\n${HELP}`);
    const size = /^(\d+)x(\d+)$/.exec(values.size!);
    if (!size) throw new CliError(`--size needs WIDTHxHEIGHT (e.g. 400x350), got '${values.size}'`);
    const [width, height] = [Number(size[1]), Number(size[2])];
    if (width < 8 || height < 8 || width > 4096 || height > 4096)
      throw new CliError(`--size needs sides in 8..4096, got ${width}x${height}`);
    if (!/^[A-Za-z0-9_.-]+$/.test(values.prefix!))
      throw new CliError(`--prefix needs a plain file name part, got '${values.prefix}'`);
    const int = { integer: true, min: 0 };
    const imbalance = numberOr('--imbalance', values.imbalance, 10, { min: 1 });
    const result = await synthImageList({
      out: values.out,
      classes: numberOr('--classes', values.classes, 10, { integer: true, min: 1, max: 100_000 }),
      imbalance,
      maxPerClass: numberOr('--max-per-class', values['max-per-class'], 20, { integer: true, min: 1 }),
      valPerClass: numberOr('--val-per-class', values['val-per-class'], 2, int),
      testPerClass: numberOr('--test-per-class', values['test-per-class'], 2, int),
      width,
      height,
      quality: numberOr('--quality', values.quality, 90, { integer: true, min: 1, max: 100 }),
      prefix: values.prefix!,
      seed: values.seed === undefined ? 0 : requiredNumber('--seed', values.seed, int),
    });
    if (values.json) console.log(JSON.stringify(result));
    else {
      const train = result.counts.train.reduce((a, b) => a + b, 0);
      console.log(
        `wrote ${result.images} JPEGs (${(result.bytes / 1e6).toFixed(1)} MB): ${train} train, ` +
          `${result.counts.val} val, ${result.counts.test} test`,
      );
      for (const f of Object.values(result.lists)) console.log(`  ${f}`);
    }
    return 0;
  },
});
