# Generates test/golden/longtail/autoaugment.json: the outputs of AutoAugment's image operations
# as BalPoE-CalibratedLT's dataset/autoaugm.py (DeepVoltaire's CIFAR10Policy / SubPolicy) calls
# them, computed by Pillow 9.4 on small fixed RGB images. Each operation is called the way
# SubPolicy's lambdas call it, with the random sign passed in instead of drawn, so that every
# operation can be checked at both signs.
#
# Images (stored channel-major, c x h x w, base64):
#   noise16  16x16 uniform noise (numpy seed 0): every operation at magnitude levels 3 and 9
#   flat16   16x16 flat regions: a constant red channel (equalize / autocontrast leave it alone),
#            a green channel whose equalize step is 0, a blue channel of four levels
#   odd13x9  13 wide, 9 high, noise: the geometric operations and sharpness on a non-square image
#   (rotations by other angles than the policy's, level null, on noise16 and odd13x9)
#   noise32  32x32 noise (a CIFAR-sized image): every (operation, level) pair CIFAR10Policy uses,
#            both signs, stored as SHA-256 digests of the output bytes to keep the file small
#
# Run: /usr/bin/python3 scripts/golden/autoaugment.py  (Pillow 9.4, numpy)
import base64, hashlib, json, os
import numpy as np
import PIL
from PIL import Image, ImageEnhance, ImageOps

FILL = (128, 128, 128)

# The magnitude tables of SubPolicy (np.int is gone from numpy; int is what it meant).
RANGES = {
    'shearX': np.linspace(0, 0.3, 10),
    'shearY': np.linspace(0, 0.3, 10),
    'translateX': np.linspace(0, 150 / 331, 10),
    'translateY': np.linspace(0, 150 / 331, 10),
    'rotate': np.linspace(0, 30, 10),
    'color': np.linspace(0.0, 0.9, 10),
    'posterize': np.round(np.linspace(8, 4, 10), 0).astype(int),
    'solarize': np.linspace(256, 0, 10),
    'contrast': np.linspace(0.0, 0.9, 10),
    'sharpness': np.linspace(0.0, 0.9, 10),
    'brightness': np.linspace(0.0, 0.9, 10),
    'autocontrast': [0] * 10,
    'equalize': [0] * 10,
    'invert': [0] * 10,
}
SIGNED = {'shearX', 'shearY', 'translateX', 'translateY', 'color', 'contrast', 'sharpness', 'brightness'}


def rotate_with_fill(img, magnitude):
    rot = img.convert('RGBA').rotate(magnitude)
    return Image.composite(rot, Image.new('RGBA', rot.size, (128,) * 4), rot).convert(img.mode)


def apply(op, img, magnitude, sign):
    if op == 'shearX':
        return img.transform(img.size, Image.AFFINE, (1, magnitude * sign, 0, 0, 1, 0), Image.BICUBIC, fillcolor=FILL)
    if op == 'shearY':
        return img.transform(img.size, Image.AFFINE, (1, 0, 0, magnitude * sign, 1, 0), Image.BICUBIC, fillcolor=FILL)
    if op == 'translateX':
        return img.transform(img.size, Image.AFFINE, (1, 0, magnitude * img.size[0] * sign, 0, 1, 0), fillcolor=FILL)
    if op == 'translateY':
        return img.transform(img.size, Image.AFFINE, (1, 0, 0, 0, 1, magnitude * img.size[1] * sign), fillcolor=FILL)
    if op == 'rotate':
        return rotate_with_fill(img, magnitude)
    if op == 'color':
        return ImageEnhance.Color(img).enhance(1 + magnitude * sign)
    if op == 'posterize':
        return ImageOps.posterize(img, magnitude)
    if op == 'solarize':
        return ImageOps.solarize(img, magnitude)
    if op == 'contrast':
        return ImageEnhance.Contrast(img).enhance(1 + magnitude * sign)
    if op == 'sharpness':
        return ImageEnhance.Sharpness(img).enhance(1 + magnitude * sign)
    if op == 'brightness':
        return ImageEnhance.Brightness(img).enhance(1 + magnitude * sign)
    if op == 'autocontrast':
        return ImageOps.autocontrast(img)
    if op == 'equalize':
        return ImageOps.equalize(img)
    if op == 'invert':
        return ImageOps.invert(img)
    raise ValueError(op)


def planar(img):
    return np.ascontiguousarray(np.asarray(img).transpose(2, 0, 1)).tobytes()


def b64(img):
    return base64.b64encode(planar(img)).decode('ascii')


rs = np.random.RandomState(0)
noise16 = rs.randint(0, 256, (16, 16, 3), dtype=np.uint8)
odd = rs.randint(0, 256, (9, 13, 3), dtype=np.uint8)
noise32 = rs.randint(0, 256, (32, 32, 3), dtype=np.uint8)
flat = np.zeros((16, 16, 3), dtype=np.uint8)
flat[:, :, 0] = 77
flat[:, :, 1] = 200
flat[0, :4, 1] = 10  # 4 of 256 pixels: (256 - 252) // 255 == 0, equalize's step is 0
flat[:8, :8, 2] = 30
flat[:8, 8:, 2] = 60
flat[8:, :8, 2] = 61
flat[8:, 8:, 2] = 220
images = {name: Image.fromarray(a, 'RGB') for name, a in
          [('noise16', noise16), ('flat16', flat), ('odd13x9', odd), ('noise32', noise32)]}

# CIFAR10Policy's sub-policies: (p1, op1, level1, p2, op2, level2)
POLICY = [
    (0.1, 'invert', 7, 0.2, 'contrast', 6), (0.7, 'rotate', 2, 0.3, 'translateX', 9),
    (0.8, 'sharpness', 1, 0.9, 'sharpness', 3), (0.5, 'shearY', 8, 0.7, 'translateY', 9),
    (0.5, 'autocontrast', 8, 0.9, 'equalize', 2), (0.2, 'shearY', 7, 0.3, 'posterize', 7),
    (0.4, 'color', 3, 0.6, 'brightness', 7), (0.3, 'sharpness', 9, 0.7, 'brightness', 9),
    (0.6, 'equalize', 5, 0.5, 'equalize', 1), (0.6, 'contrast', 7, 0.6, 'sharpness', 5),
    (0.7, 'color', 7, 0.5, 'translateX', 8), (0.3, 'equalize', 7, 0.4, 'autocontrast', 8),
    (0.4, 'translateY', 3, 0.2, 'sharpness', 6), (0.9, 'brightness', 6, 0.2, 'color', 8),
    (0.5, 'solarize', 2, 0.0, 'invert', 3), (0.2, 'equalize', 0, 0.6, 'autocontrast', 0),
    (0.2, 'equalize', 8, 0.6, 'equalize', 4), (0.9, 'color', 9, 0.6, 'equalize', 6),
    (0.8, 'autocontrast', 4, 0.2, 'solarize', 8), (0.1, 'brightness', 3, 0.7, 'color', 0),
    (0.4, 'solarize', 5, 0.9, 'autocontrast', 3), (0.9, 'translateY', 9, 0.7, 'translateY', 9),
    (0.9, 'autocontrast', 2, 0.8, 'solarize', 3), (0.8, 'equalize', 8, 0.1, 'invert', 3),
    (0.7, 'translateY', 9, 0.9, 'autocontrast', 1),
]

ALL_OPS = list(RANGES)
cases = []


def add(image, op, level, sign, digest=False, magnitude=None):
    if magnitude is None:
        magnitude = RANGES[op][level]
    out = apply(op, images[image], magnitude, sign)
    case = {'image': image, 'op': op, 'level': level, 'magnitude': float(magnitude)}
    if op in SIGNED:
        case['sign'] = sign
    if digest:
        case['sha256'] = hashlib.sha256(planar(out)).hexdigest()
    else:
        case['out'] = b64(out)
    cases.append(case)


def signs(op):
    return [-1, 1] if op in SIGNED else [1]


for op in ALL_OPS:
    levels = [3, 9] if op not in ('autocontrast', 'equalize', 'invert') else [0]
    if op == 'posterize':
        levels = [0, 2, 4, 6, 8]  # 8, 7, 6, 5, 4 bits
    for level in levels:
        for s in signs(op):
            add('noise16', op, level, s)
for op, level in [('equalize', 0), ('autocontrast', 0), ('posterize', 8), ('solarize', 4),
                  ('contrast', 9), ('sharpness', 9), ('color', 5), ('rotate', 5)]:
    for s in signs(op):
        add('flat16', op, level, s)
for op in ['shearX', 'shearY', 'translateX', 'translateY', 'rotate', 'sharpness']:
    for s in signs(op):
        add('odd13x9', op, 5, s)
# rotation by any angle (the policy's rotate has no sign): Pillow's transpose shortcuts at
# multiples of 90 degrees (a non-square image takes the affine path at 90 and 270), negative angles
for image, angle in [('noise16', -7.5), ('noise16', 90), ('noise16', 180), ('noise16', 270),
                     ('odd13x9', 90), ('odd13x9', -45)]:
    add(image, 'rotate', None, 1, magnitude=angle)
pairs = sorted({(op, level) for p in POLICY for (op, level) in [(p[1], p[2]), (p[4], p[5])]})
for op, level in pairs:
    for s in signs(op):
        add('noise32', op, level, s, digest=True)

here = os.path.dirname(os.path.abspath(__file__))
path = os.path.join(here, '..', '..', 'test', 'golden', 'longtail', 'autoaugment.json')
doc = {
    'generator': 'scripts/golden/autoaugment.py',
    'pillow': PIL.__version__,
    'numpy': np.__version__,
    'images': {name: {'h': im.size[1], 'w': im.size[0], 'data': b64(im)} for name, im in images.items()},
    'cases': cases,
}
with open(path, 'w') as f:
    json.dump(doc, f, indent=0, separators=(',', ':'))
    f.write('\n')
print(path, len(cases), 'cases', os.path.getsize(path), 'bytes')
