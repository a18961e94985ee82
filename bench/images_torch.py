"""The PyTorch reference of bench/images.ts: one epoch of an image list through a DataLoader with
num_workers worker processes and the ImageNet training transform of the reference code
(RandomResizedCrop 224, RandomHorizontalFlip, ColorJitter 0.4, ToTensor, Normalize), as the
official loaders build it (PIL open + convert('RGB') per image). torchvision's transforms are
used where torchvision is installed; without it, the same transforms written with PIL and torch
(torchvision's own PIL code paths: ImageEnhance for the jitter, a bilinear PIL resize of the
crop), so that the reference runs on machines with Debian's python3-torch alone.

Prints one JSON line: images, seconds, images_per_s, cpu_seconds (this process and its finished
workers), impl.

    python3 bench/images_torch.py ROOT LIST WORKERS BATCH [SIZE] [MAX_IMAGES]
"""
import gc
import json
import math
import os
import random
import resource
import sys
import time

import torch
from PIL import Image, ImageEnhance
from torch.utils.data import DataLoader, Dataset

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]

try:
    from torchvision import transforms as T

    def make_transform(size):
        return T.Compose([
            T.RandomResizedCrop(size),
            T.RandomHorizontalFlip(),
            T.ColorJitter(0.4, 0.4, 0.4, 0),
            T.ToTensor(),
            T.Normalize(MEAN, STD),
        ])

    IMPL = "torchvision"
except ImportError:
    import numpy as np

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

    def make_transform(size):
        mean = torch.tensor(MEAN).view(3, 1, 1)
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
    root, list_file, workers, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    size = int(sys.argv[5]) if len(sys.argv) > 5 else 224
    max_images = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    torch.manual_seed(0)
    random.seed(0)
    ds = ImageList(root, list_file, make_transform(size), max_images)
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
        "impl": IMPL,
    }))


if __name__ == "__main__":
    main()
