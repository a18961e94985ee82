# Generates test/golden/longtail/numpy_shuffle.json: the outputs of numpy's legacy global
# generator (np.random.seed + np.random.shuffle) that tailor's NumpyLegacyRandom must
# reproduce, including the CIFAR-LT recipe of the reference code (seed 0, one shuffle per class
# of np.where(targets == c)[0], take the first n).
import json, os
import numpy as np

out = {}
np.random.seed(0)
a = np.arange(10)
np.random.shuffle(a)
out['shuffle10_seed0'] = a.tolist()
np.random.seed(12345)
b = np.arange(1000)
np.random.shuffle(b)
out['shuffle1000_seed12345_head'] = b[:20].tolist()
# CIFAR-LT style: 10 classes, labels cycling 0..9 over 200 images, exponential counts r=10
targets = np.array([i % 10 for i in range(200)], dtype=np.int64)
counts = [int(20 * (0.1 ** (i / 9.0))) for i in range(10)]
np.random.seed(0)
selected = []
for c, n in zip(np.unique(targets), counts):
    idx = np.where(targets == c)[0]
    np.random.shuffle(idx)
    selected.extend(idx[:n].tolist())
out['cifar_lt_counts'] = counts
out['cifar_lt_selected'] = selected
here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, '..', '..', 'test', 'golden', 'longtail', 'numpy_shuffle.json')
with open(path, 'w') as f:
    json.dump(out, f)
    f.write('\n')
print(path)
