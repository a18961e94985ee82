#!/usr/bin/env python3
"""Golden data for tailor's torch.data randomSplit, SubsetRandomSampler and BatchSampler, from PyTorch 1.13.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/golden/data_utils.py
Writes test/golden/torch/data_utils.json. random_split's index lists for integer lengths and
fractions (whose rounding gives the remainder round-robin), drawn on the global generator after
torch.manual_seed(seed) (two splits in a row) and on a torch.Generator().manual_seed(seed) of
their own; SubsetRandomSampler's orders for two epochs the same two ways (the sampler's own
generator carrying its state from one epoch to the next); BatchSampler's batches of a SequentialSampler with and without
drop_last. Also the global generator's next draw after the splits on a generator of their own, to
check that those leave the global one alone.
"""
import json
import os
import warnings

import torch
from torch.utils.data import BatchSampler, SequentialSampler, SubsetRandomSampler, random_split

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'golden', 'torch')

# (dataset length, lengths): integer sizes, and fractions whose floors leave a remainder
SPLITS = [
    (10, [3, 7]),
    (10, [10]),
    (17, [5, 0, 12]),
    (10, [0.3, 0.3, 0.4]),
    (11, [0.5, 0.5]),
    (30, [0.1, 0.2, 0.3, 0.4]),
    (7, [0.25, 0.25, 0.25, 0.25]),
    (13, [0.7, 0.2, 0.1]),
    (5, [1, 0]),  # sums to 1: read as fractions, as PyTorch does (sizes 5 and 0)
    (100, [0.8, 0.1, 0.1]),
]
SEEDS = [0, 1, 42, 12345]


def split_indices(n, lengths, generator):
    return [list(s.indices) for s in random_split(range(n), lengths, generator=generator)]


def main():
    warnings.simplefilter('ignore')  # the zero-length split's warning
    splits = []
    for n, lengths in SPLITS:
        for seed in SEEDS:
            torch.manual_seed(seed)
            global_first = split_indices(n, lengths, torch.default_generator)
            global_second = split_indices(n, lengths, torch.default_generator)
            gen = torch.Generator().manual_seed(seed)
            torch.manual_seed(seed + 1000)
            own = split_indices(n, lengths, gen)
            # the global generator untouched by the splits on gen: its next draw after manual_seed(seed + 1000)
            after = torch.rand(3, dtype=torch.float64).tolist()
            splits.append({
                'n': n, 'lengths': lengths, 'seed': seed,
                'sizes': [len(s) for s in global_first],
                'global': [global_first, global_second],
                'generator': own,
                'globalAfterGenerator': after,
            })
    samplers = []
    for indices in ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [3, 14, 15, 92, 65, 35, 89, 79], [5]):
        for seed in SEEDS:
            torch.manual_seed(seed)
            s = SubsetRandomSampler(indices)
            global_epochs = [list(s), list(s)]
            s = SubsetRandomSampler(indices, generator=torch.Generator().manual_seed(seed))
            own_epochs = [list(s), list(s)]
            samplers.append({'indices': indices, 'seed': seed, 'global': global_epochs, 'generator': own_epochs})
    batches = []
    for n, size in ((10, 3), (9, 3), (2, 5), (0, 4)):
        for drop in (False, True):
            b = BatchSampler(SequentialSampler(range(n)), size, drop)
            batches.append({'n': n, 'batchSize': size, 'dropLast': drop, 'length': len(b), 'batches': list(b)})
    with open(os.path.join(OUT, 'data_utils.json'), 'w') as f:
        json.dump({
            'torch': torch.__version__,
            'randomSplit': splits,
            'subsetRandomSampler': samplers,
            'batchSampler': batches,
        }, f, separators=(',', ':'))
        f.write('\n')


if __name__ == '__main__':
    main()
