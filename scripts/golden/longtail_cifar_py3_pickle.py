# Generates test/golden/longtail/cifar100_py3_protocol2/{test,meta}: a tiny CIFAR-100
# python layout re-saved by Python 3 with numpy at protocol 2 (bytes become
# _codecs.encode(..., 'latin1') calls), the form users get when they re-pickle the batches.
# 100 classes x 1 test image (no train file, to keep it small); pixel p of image i =
# (i * 31 + p * 7) % 128 (below 128 so that latin-1 text stays one byte in UTF-8).
import os, pickle
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, '..', '..', 'test', 'golden', 'longtail', 'cifar100_py3_protocol2')
os.makedirs(out, exist_ok=True)
n = 100
i = np.arange(n)[:, None]
p = np.arange(3072)[None, :]
data = ((i * 31 + p * 7) % 128).astype(np.uint8)
labels = [int(k) for k in range(n)]
for split in ['test']:
    d = {b'data': data, b'fine_labels': labels, b'coarse_labels': [k % 20 for k in labels],
         b'batch_label': split.encode(), b'filenames': [b'img_%d.png' % k for k in range(n)]}
    with open(os.path.join(out, split), 'wb') as f:
        pickle.dump(d, f, protocol=2)
with open(os.path.join(out, 'meta'), 'wb') as f:
    pickle.dump({b'fine_label_names': [b'class_%d' % k for k in range(100)]}, f, protocol=2)
print(out)
