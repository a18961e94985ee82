"""Pillow's side of bench/randaugment-ops.ts: each RandAugment operation of BalPoE's recipe, at
magnitude 10, applied to the same 224 x 224 RGB image as tailor's side (its formula below), as
scripts/golden/randaugment.py's apply() calls Pillow (the calls tailor's operations match pixel for
pixel). Prints one JSON object: CPU-ms per call per case.

  python3 bench/randaugment_ops.py CALLS"""
import json
import os
import sys
import time

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts', 'golden'))
from randaugment import GEOMETRIC, OPS, apply  # noqa: E402


def bench_image(size=224):
    # the formula of bench/randaugment-ops.ts: smooth ramps with a hashed texture, every level used
    y, x = np.mgrid[0:size, 0:size]
    planes = [((x * 7 + y * 13 + c * 50 + (x * y) % 31) % 256) for c in range(3)]
    return Image.fromarray(np.stack(planes, axis=2).astype(np.uint8), 'RGB')


def main():
    calls = int(sys.argv[1])
    img = bench_image()
    out = {}
    for op in OPS:
        for resample in (('bilinear', 'bicubic') if op in GEOMETRIC else ('bilinear',)):
            key = f'{op}/{resample}' if op in GEOMETRIC else op
            for _ in range(max(3, calls // 10)):
                apply(op, img, 10, 1, resample)
            t0 = time.process_time()
            for _ in range(calls):
                apply(op, img, 10, 1, resample)
            out[key] = 1000 * (time.process_time() - t0) / calls
    print(json.dumps(out))


if __name__ == '__main__':
    main()
