"""The PyTorch reference of bench/images.ts: one epoch of an image list through a DataLoader with
num_workers worker processes and the ImageNet training transform of the reference code
(RandomResizedCrop 224, RandomHorizontalFlip, ColorJitter 0.4, ToTensor, Normalize), as the
official loaders build it (PIL open + convert('RGB') per image). torchvision's transforms are
used where torchvision is installed; without it, the same transforms written with PIL and torch
(torchvision's own PIL code paths: ImageEnhance for the jitter, a bilinear PIL resize of the
crop), so that the reference runs with PyTorch alone.

--randaugm: BalPoE-CalibratedLT's long-training transform instead (dataset/others.py aug_plus,
augmentation_randncls): RandomResizedCrop(size, scale=(0.08, 1)), RandomHorizontalFlip,
RandomApply([ColorJitter(0.4, 0.4, 0.4, 0.0)], p=1.0), then
rand_augment_transform('rand-n2-m10-mstd0.5', ra_params) of its dataset/randaugment.py, ToTensor,
Normalize. Its draws are the reference's (numpy's choice of two of the 15 operations with
replacement; per operation random's fire / gauss magnitude / sign / filter); the operations are
the Pillow calls of scripts/golden/randaugment.py, the rendering tailor's RandAugment is tested
against pixel for pixel.

Prints one JSON line: images, seconds, images_per_s, cpu_seconds (this process and its finished
workers), impl.

    python3 bench/images_torch.py ROOT LIST WORKERS BATCH [SIZE] [MAX_IMAGES] [--randaugm]
"""
import gc
import json
import math
import os
import random
import resource
import sys
import time

import numpy as np
import torch
from PIL import Image, ImageEnhance
from torch.utils.data import DataLoader, Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts', 'golden'))
import randaugment as ra_ops  # noqa: E402  (importing it writes nothing)

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


class BalPoERandAugment:
    """rand_augment_transform('rand-n2-m10-mstd0.5', ra_params) as BalPoE's RandAugment.__call__ and
    AutoAugmentOp.__call__ draw it; fill ra_params' img_mean (ra_ops.FILL)."""

    def __init__(self, layers=2, magnitude=10.0, magnitude_std=0.5, prob=0.5):
        self.layers, self.magnitude, self.magnitude_std, self.prob = layers, magnitude, magnitude_std, prob

    def __call__(self, img):
        for op in np.random.choice(ra_ops.OPS, self.layers, replace=True):
            if random.random() > self.prob:
                continue
            m = min(ra_ops.MAX_LEVEL, max(0.0, random.gauss(self.magnitude, self.magnitude_std)))
            sign, resample = 1, 'bilinear'
            if op in ra_ops.GEOMETRIC:
                # level_to_arg's _randomly_negate, then _check_args_tf's random.choice of the filter
                sign = -1 if random.random() > 0.5 else 1
                resample = random.choice(('bilinear', 'bicubic'))
            img = ra_ops.apply(op, img, m, sign, resample)
        return img


try:
    from torchvision import transforms as T

    def make_transform(size, randaugm=False):
        if randaugm:
            return T.Compose([
                T.RandomResizedCrop(size, scale=(0.08, 1.0)),
                T.RandomHorizontalFlip(),
                T.RandomApply([T.ColorJitter(0.4, 0.4, 0.4, 0.0)], p=1.0),
                BalPoERandAugment(),
                T.ToTensor(),
                T.Normalize(MEAN, STD),
            ])
        return T.Compose([
            T.RandomResizedCrop(size),
            T.RandomHorizontalFlip(),
            T.ColorJitter(0.4, 0.4, 0.4, 0),
            T.ToTensor(),
            T.Normalize(MEAN, STD),
        ])

    IMPL = "torchvision"
except ImportError:

    def rrc_box(w, h, scale=(0.08, 1.0), ratio=(3 / 4, 4 / 3)):
        # torchvision RandomResizedCrop.get_params
        area = w * h
        log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
        for _ in range(10):
            target = area * random.uniform(*scale)
            aspect = math.exp(random.uniform(*log_ratio))
            cw = int(round(math.sqrt(target * aspect)))
            ch = int(round(math.sqrt(target / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                top = random.randint(0, h - ch)
                left = random.randint(0, w - cw)
                return left, top, cw, ch
        in_ratio = w / h
        cw, ch = w, h
        if in_ratio < min(ratio):
            ch = int(round(cw / min(ratio)))
        elif in_ratio > max(ratio):
            cw = int(round(ch * max(ratio)))
        return (w - cw) // 2, (h - ch) // 2, cw, ch

    def make_transform(size, randaugm=False):
        mean = torch.tensor(MEAN).view(3, 1, 1)
        rand_augment = BalPoERandAugment() if randaugm else None
        std = torch.tensor(STD).view(3, 1, 1)

        def transform(img):
            left, top, cw, ch = rrc_box(*img.size)
            img = img.resize((size, size), Image.BILINEAR, box=(left, top, left + cw, top + ch))
            if random.random() < 0.5:
                img = img.transpose(Image.FLIP_LEFT_RIGHT)
            # ColorJitter(0.4, 0.4, 0.4, 0): the three enhancements in a random order
            for op in torch.randperm(3).tolist():
                factor = random.uniform(0.6, 1.4)
                enhance = (ImageEnhance.Brightness, ImageEnhance.Contrast, ImageEnhance.Color)[op]
                img = enhance(img).enhance(factor)
            if rand_augment:
                img = rand_augment(img)
            x = torch.from_numpy(np.asarray(img, dtype=np.uint8).copy()).permute(2, 0, 1).float().div_(255)
            return (x - mean) / std

        return transform

    IMPL = "torch+PIL (torchvision not installed)"


class ImageList(Dataset):
    """SADE's LT_Dataset: a root and a txt list of 'relative/path label' lines."""

    def __init__(self, root, list_file, transform, max_images=0):
        self.root = root
        self.transform = transform
        self.items = []
        with open(list_file) as f:
            for line in f:
                if line.strip():
                    path, label = line.rsplit(maxsplit=1)
                    self.items.append((path, int(label)))
        if max_images:
            self.items = self.items[:max_images]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        with open(os.path.join(self.root, path), "rb") as f:
            img = Image.open(f).convert("RGB")
        return self.transform(img), label


def main():
    randaugm = '--randaugm' in sys.argv[1:]
    argv = [a for a in sys.argv[1:] if a != '--randaugm']
    root, list_file, workers, batch = argv[0], argv[1], int(argv[2]), int(argv[3])
    size = int(argv[4]) if len(argv) > 4 else 224
    max_images = int(argv[5]) if len(argv) > 5 else 0
    torch.manual_seed(0)
    random.seed(0)
    ds = ImageList(root, list_file, make_transform(size, randaugm), max_images)
    extra = {"prefetch_factor": 2} if workers > 0 else {}
    loader = DataLoader(ds, batch_size=batch, shuffle=True, num_workers=workers, **extra)
    t0 = time.perf_counter()
    c0 = time.process_time()
    n = 0
    for x, y in loader:
        n += x.shape[0]
    seconds = time.perf_counter() - t0
    del loader  # the workers exit; their CPU time then counts in RUSAGE_CHILDREN
    gc.collect()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0 + children.ru_utime + children.ru_stime
    print(json.dumps({
        "images": n,
        "seconds": seconds,
        "images_per_s": n / seconds,
        "cpu_seconds": cpu,
        "impl": IMPL + (" + BalPoE's RandAugment (scripts/golden/randaugment.py's Pillow calls)" if randaugm else ""),
    }))


if __name__ == "__main__":
    main()
