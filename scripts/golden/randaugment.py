# Generates test/golden/longtail/randaugment.json: the outputs of RandAugment's 15 operations as
# BalPoE-CalibratedLT's dataset/randaugment.py applies them in its long-training image-list
# recipe (aug_plus's rand_augment_transform('rand-n2-m10-mstd0.5', ra_params), with
# img_mean = round(255 x ImageNet mean) = (124, 116, 104) as the fill), computed by Pillow 9.4 on
# small fixed RGB images. Each case fixes what the reference draws at random (the magnitude after
# its noise and clipping, the sign of rotate / shear / translate, the filter BILINEAR or BICUBIC),
# turns the magnitude into the operation's argument with the reference's level_to_arg formulas
# and calls Pillow as the reference's op functions do.
#
# Images (stored channel-major, c x h x w, base64):
#   noise16  16x16 uniform noise (numpy seed 1): every operation at magnitudes 10, 9.3 and 7.77,
#            both signs and both filters where drawn; posterize at the magnitudes of 0..4 bits,
#            solarize / solarize-add / rotate at 0
#   odd13x9  13 wide, 9 high, noise: the geometric operations (translation relative to the width
#            or the height, rotation about a non-square centre) at magnitude 8.6
#   noise48x40  48 x 40 noise: every operation at magnitude 9.61, both signs and filters, stored
#            as SHA-256 digests of the output bytes to keep the file small
#
# Run: /usr/bin/python3 scripts/golden/randaugment.py  (Pillow 9.4, numpy). Importing it writes
# nothing: bench/images_torch.py runs its operations (apply) in the RandAugment of its PyTorch side.
import base64, hashlib, json, os
import numpy as np
import PIL
from PIL import Image, ImageEnhance, ImageOps

MAX_LEVEL = 10.0
FILL = tuple(min(255, round(255 * x)) for x in (0.485, 0.456, 0.406))
assert FILL == (124, 116, 104)
FILTERS = {'bilinear': Image.BILINEAR, 'bicubic': Image.BICUBIC}
GEOMETRIC = {'Rotate', 'ShearX', 'ShearY', 'TranslateXRel', 'TranslateYRel'}
OPS = ['AutoContrast', 'Equalize', 'Invert', 'Rotate', 'PosterizeTpu', 'Solarize', 'SolarizeAdd',
       'Color', 'Contrast', 'Brightness', 'Sharpness', 'ShearX', 'ShearY', 'TranslateXRel',
       'TranslateYRel']


def arg_of(op, magnitude, sign):
    # level_to_arg of the reference, the random negation replaced by `sign`
    level = magnitude / MAX_LEVEL
    if op == 'Rotate':
        v = level * 30.0
    elif op == 'PosterizeTpu':
        return int(level * 4)
    elif op == 'Solarize':
        return int(level * 256)
    elif op == 'SolarizeAdd':
        return int(level * 110)
    elif op in ('Color', 'Contrast', 'Brightness', 'Sharpness'):
        return level * 1.8 + 0.1
    elif op in ('ShearX', 'ShearY'):
        v = level * 0.3
    elif op in ('TranslateXRel', 'TranslateYRel'):
        v = level * 0.45
    else:
        return None
    return -v if sign < 0 else v


def solarize_add(img, add, thresh=128):
    lut = [min(255, i + add) if i < thresh else i for i in range(256)]
    return img.point(lut + lut + lut)


def apply(op, img, magnitude, sign, resample):
    a = arg_of(op, magnitude, sign)
    kw = dict(resample=FILTERS[resample], fillcolor=FILL) if op in GEOMETRIC else {}
    if op == 'AutoContrast':
        return ImageOps.autocontrast(img)
    if op == 'Equalize':
        return ImageOps.equalize(img)
    if op == 'Invert':
        return ImageOps.invert(img)
    if op == 'Rotate':
        return img.rotate(a, **kw)
    if op == 'PosterizeTpu':
        return img if a >= 8 else ImageOps.posterize(img, a)
    if op == 'Solarize':
        return ImageOps.solarize(img, a)
    if op == 'SolarizeAdd':
        return solarize_add(img, a)
    if op == 'Color':
        return ImageEnhance.Color(img).enhance(a)
    if op == 'Contrast':
        return ImageEnhance.Contrast(img).enhance(a)
    if op == 'Brightness':
        return ImageEnhance.Brightness(img).enhance(a)
    if op == 'Sharpness':
        return ImageEnhance.Sharpness(img).enhance(a)
    if op == 'ShearX':
        return img.transform(img.size, Image.AFFINE, (1, a, 0, 0, 1, 0), **kw)
    if op == 'ShearY':
        return img.transform(img.size, Image.AFFINE, (1, 0, 0, a, 1, 0), **kw)
    if op == 'TranslateXRel':
        return img.transform(img.size, Image.AFFINE, (1, 0, a * img.size[0], 0, 1, 0), **kw)
    if op == 'TranslateYRel':
        return img.transform(img.size, Image.AFFINE, (1, 0, 0, 0, 1, a * img.size[1]), **kw)
    raise ValueError(op)


def planar(img):
    return np.ascontiguousarray(np.asarray(img).transpose(2, 0, 1)).tobytes()


def b64(img):
    return base64.b64encode(planar(img)).decode('ascii')


def main():
    rs = np.random.RandomState(1)
    images = {
        'noise16': Image.fromarray(rs.randint(0, 256, (16, 16, 3), dtype=np.uint8), 'RGB'),
        'odd13x9': Image.fromarray(rs.randint(0, 256, (9, 13, 3), dtype=np.uint8), 'RGB'),
        'noise48x40': Image.fromarray(rs.randint(0, 256, (40, 48, 3), dtype=np.uint8), 'RGB'),
    }
    cases = []

    def variants(op):
        if op not in GEOMETRIC:
            return [(1, None)]
        return [(s, r) for s in (-1, 1) for r in ('bilinear', 'bicubic')]

    def add(image, op, magnitude, digest=False):
        for sign, resample in variants(op):
            out = apply(op, images[image], magnitude, sign, resample or 'bilinear')
            case = {'image': image, 'op': op, 'magnitude': magnitude, 'arg': arg_of(op, magnitude, sign)}
            if resample:
                case['sign'] = sign
                case['resample'] = resample
            if digest:
                case['sha256'] = hashlib.sha256(planar(out)).hexdigest()
            else:
                case['out'] = b64(out)
            cases.append(case)

    for op in OPS:
        for m in (10.0, 9.3, 7.77):
            add('noise16', op, m)
    for m in (0.0, 2.5, 5.0, 7.5):  # 0, 1, 2 and 3 bits (10 keeps 4)
        add('noise16', 'PosterizeTpu', m)
    for op in ('Solarize', 'SolarizeAdd', 'Rotate'):
        add('noise16', op, 0.0)
    for op in sorted(GEOMETRIC):
        add('odd13x9', op, 8.6)
    for op in OPS:
        add('noise48x40', op, 9.61, digest=True)

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, '..', '..', 'test', 'golden', 'longtail', 'randaugment.json')
    doc = {
        'generator': 'scripts/golden/randaugment.py',
        'pillow': PIL.__version__,
        'numpy': np.__version__,
        'fill': list(FILL),
        'images': {name: {'h': im.size[1], 'w': im.size[0], 'data': b64(im)} for name, im in images.items()},
        'cases': cases,
    }
    with open(path, 'w') as f:
        json.dump(doc, f, indent=0, separators=(',', ':'))
        f.write('\n')
    print(path, len(cases), 'cases', os.path.getsize(path), 'bytes')


if __name__ == '__main__':
    main()
