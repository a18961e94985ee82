#!/usr/bin/env python3
"""Writes test/golden/torch/nn_spatial_more.json: grid sampling (grid_sample in each mode and
padding mode, 4-d and 5-d, and affine_grid), fold and unfold, AdaptiveMaxPool1d/2d/3d with their
indices, LPPool1d/2d, FractionalMaxPool2d/3d (their random samples drawn by torch.rand from the
global generator right after the case's seed, or given), UpsamplingNearest2d,
UpsamplingBilinear2d and F.interpolate in each mode with its options, then the functional forms of
those pools, from PyTorch 1.13, in float64: the inputs, every output (indices too), an upstream
gradient per floating output and the gradients of the floating inputs (input, grid, theta). Tiny
shapes, so the test stays light.
Run: /usr/bin/python3 scripts/golden/nn_spatial_more.py"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
cases = []


def data(t):
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""),
            "data": t.detach().reshape(-1).tolist()}


def case(name, shapes, fn, seed=0, scale=1.0):
    """Inputs drawn from seed (randn * scale, float64); the seed again right before fn, so that
    a random op draws what tailor draws after manualSeed(seed)."""
    torch.manual_seed(seed)
    inputs = [(torch.randn(*s, dtype=torch.float64) * scale).requires_grad_() for s in shapes]
    torch.manual_seed(seed)
    out = fn(*inputs)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    torch.manual_seed(seed + 1000)
    upstream = [torch.randn(*o.shape, dtype=torch.float64) if o.is_floating_point() else None for o in outs]
    loss = sum((o * w).sum() for o, w in zip(outs, upstream) if w is not None)
    loss.backward()
    cases.append({
        "name": name, "seed": seed,
        "inputs": [data(x) for x in inputs],
        "outputs": [data(o) for o in outs],
        "upstream": [w.reshape(-1).tolist() if w is not None else None for w in upstream],
        "grads": [x.grad.reshape(-1).tolist() if x.grad is not None else None for x in inputs],
    })


# grid_sample: grids reaching past [-1, 1] so that each padding mode shows.
case("grid_bilinear_zeros", [[2, 2, 4, 5], [2, 3, 4, 2]],
     lambda x, g: F.grid_sample(x, g * 0.7, align_corners=False), seed=1)
case("grid_nearest_border_align", [[1, 2, 4, 5], [1, 3, 3, 2]],
     lambda x, g: F.grid_sample(x, g * 0.7, mode="nearest", padding_mode="border", align_corners=True), seed=2)
case("grid_bicubic_reflection", [[1, 2, 5, 4], [1, 3, 4, 2]],
     lambda x, g: F.grid_sample(x, g * 0.7, mode="bicubic", padding_mode="reflection", align_corners=False),
     seed=3)
case("grid_bilinear_reflection_align", [[2, 1, 4, 4], [2, 2, 3, 2]],
     lambda x, g: F.grid_sample(x, g * 0.7, padding_mode="reflection", align_corners=True), seed=4)
case("grid_bicubic_border_align", [[1, 1, 4, 5], [1, 3, 3, 2]],
     lambda x, g: F.grid_sample(x, g * 0.7, mode="bicubic", padding_mode="border", align_corners=True), seed=5)
case("grid3d_bilinear_zeros", [[1, 2, 3, 4, 3], [1, 2, 3, 2, 3]],
     lambda x, g: F.grid_sample(x, g * 0.7, align_corners=False), seed=6)
case("grid3d_nearest_reflection", [[2, 1, 3, 3, 4], [2, 2, 2, 2, 3]],
     lambda x, g: F.grid_sample(x, g * 0.7, mode="nearest", padding_mode="reflection", align_corners=False),
     seed=7)
case("affine_grid_2d", [[2, 2, 3]], lambda t: F.affine_grid(t, [2, 3, 4, 5], align_corners=False), seed=8)
case("affine_grid_2d_align", [[1, 2, 3]], lambda t: F.affine_grid(t, [1, 1, 3, 4], align_corners=True), seed=9)
case("affine_grid_3d", [[1, 3, 4]], lambda t: F.affine_grid(t, [1, 2, 2, 3, 4], align_corners=False), seed=10)
case("affine_then_sample", [[1, 2, 3], [1, 2, 5, 5]],
     lambda t, x: F.grid_sample(x, F.affine_grid(t * 0.5, [1, 2, 4, 3], align_corners=False), align_corners=False),
     seed=11)

# fold and unfold (im2col, col2im)
case("unfold_plain", [[2, 3, 4, 5]], lambda x: nn.Unfold(kernel_size=2)(x), seed=20)
case("unfold_options", [[1, 2, 6, 7]],
     lambda x: nn.Unfold(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))(x), seed=21)
case("unfold_unbatched", [[2, 4, 5]], lambda x: F.unfold(x, 3, padding=1, stride=2), seed=22)
case("fold_plain", [[2, 12, 12]], lambda x: nn.Fold(output_size=(4, 5), kernel_size=2)(x), seed=23)
case("fold_options", [[1, 12, 10]],
     lambda x: nn.Fold(output_size=(5, 6), kernel_size=(2, 3), dilation=(2, 1), padding=(1, 0), stride=(1, 2))(x),
     seed=24)
case("fold_unbatched", [[9, 8]], lambda x: F.fold(x, (3, 4), 3, padding=1, stride=(2, 1)), seed=25)

# pools
case("adaptive_max1d", [[2, 3, 7]], lambda x: nn.AdaptiveMaxPool1d(3, return_indices=True)(x), seed=30)
case("adaptive_max2d", [[1, 2, 5, 7]], lambda x: nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(x), seed=31)
case("adaptive_max2d_none", [[2, 5, 4]], lambda x: nn.AdaptiveMaxPool2d((None, 3))(x), seed=32)
case("adaptive_max3d", [[1, 2, 3, 5, 4]], lambda x: nn.AdaptiveMaxPool3d(2, return_indices=True)(x), seed=33)
case("lppool1d", [[2, 3, 8]], lambda x: nn.LPPool1d(2, 3, 2)(x), seed=34)
case("lppool1d_ceil", [[1, 2, 7]], lambda x: nn.LPPool1d(3, 2, ceil_mode=True)(x.abs() + 0.1), seed=35)
case("lppool2d", [[1, 2, 5, 6]], lambda x: nn.LPPool2d(1.5, (2, 3), (1, 2))(x.abs() + 0.1), seed=36)
case("lppool2d_default_stride", [[1, 2, 4, 6]], lambda x: nn.LPPool2d(2, 2)(x), seed=37)
case("fractional2d_size", [[2, 3, 7, 8]],
     lambda x: nn.FractionalMaxPool2d(2, output_size=(4, 5), return_indices=True)(x), seed=38)
case("fractional2d_ratio_unbatched", [[2, 8, 7]],
     lambda x: nn.FractionalMaxPool2d((3, 2), output_ratio=(0.5, 0.6))(x), seed=39)
case("fractional3d_size", [[1, 2, 5, 6, 7]],
     lambda x: nn.FractionalMaxPool3d(2, output_size=(3, 3, 4), return_indices=True)(x), seed=40)
case("fractional3d_ratio", [[2, 1, 6, 5, 6]], lambda x: nn.FractionalMaxPool3d(2, output_ratio=0.5)(x), seed=41)

# upsampling and interpolate
case("upsampling_nearest2d", [[1, 2, 3, 4]], lambda x: nn.UpsamplingNearest2d(scale_factor=2)(x), seed=50)
case("upsampling_nearest2d_size", [[1, 1, 3, 4]], lambda x: nn.UpsamplingNearest2d(size=(5, 7))(x), seed=51)
case("upsampling_bilinear2d", [[1, 2, 3, 4]], lambda x: nn.UpsamplingBilinear2d(scale_factor=(2, 1.5))(x), seed=52)
case("upsampling_bilinear2d_size", [[2, 1, 3, 3]], lambda x: nn.UpsamplingBilinear2d(size=(4, 6))(x), seed=53)
case("interp_nearest1d", [[2, 2, 5]], lambda x: F.interpolate(x, scale_factor=1.7), seed=54)
case("interp_nearest3d", [[1, 1, 2, 3, 4]], lambda x: F.interpolate(x, size=(3, 4, 6)), seed=55)
case("interp_nearest_exact1d", [[1, 2, 5]], lambda x: F.interpolate(x, size=8, mode="nearest-exact"), seed=56)
case("interp_nearest_exact2d", [[1, 2, 4, 5]],
     lambda x: F.interpolate(x, scale_factor=(1.5, 0.6), mode="nearest-exact"), seed=57)
case("interp_nearest_exact3d", [[1, 1, 3, 2, 4]], lambda x: F.interpolate(x, size=(4, 3, 3), mode="nearest-exact"),
     seed=58)
case("interp_linear_align", [[2, 2, 5]], lambda x: F.interpolate(x, size=9, mode="linear", align_corners=True),
     seed=59)
case("interp_linear_scale", [[1, 2, 5]], lambda x: F.interpolate(x, scale_factor=1.7, mode="linear"), seed=60)
case("interp_linear_recompute", [[1, 2, 5]],
     lambda x: F.interpolate(x, scale_factor=1.7, mode="linear", recompute_scale_factor=True), seed=61)
case("interp_bilinear_scale", [[1, 2, 4, 5]], lambda x: F.interpolate(x, scale_factor=(1.3, 2.2), mode="bilinear"),
     seed=62)
case("interp_bicubic", [[1, 2, 4, 5]], lambda x: F.interpolate(x, size=(7, 6), mode="bicubic"), seed=63)
case("interp_bicubic_align", [[1, 1, 4, 4]],
     lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic", align_corners=True), seed=64)
case("interp_trilinear", [[1, 2, 2, 3, 4]], lambda x: F.interpolate(x, size=(3, 5, 5), mode="trilinear"), seed=65)
case("interp_trilinear_align_scale", [[1, 1, 3, 3, 2]],
     lambda x: F.interpolate(x, scale_factor=(1.5, 2, 2.5), mode="trilinear", align_corners=True), seed=66)
case("interp_area1d", [[2, 2, 7]], lambda x: F.interpolate(x, size=3, mode="area"), seed=67)
case("interp_area2d_scale", [[1, 2, 6, 7]], lambda x: F.interpolate(x, scale_factor=0.6, mode="area"), seed=68)
case("interp_area3d", [[1, 1, 4, 5, 6]], lambda x: F.interpolate(x, size=(2, 3, 4), mode="area"), seed=69)
case("interp_bilinear_aa", [[1, 2, 8, 9]], lambda x: F.interpolate(x, size=(3, 4), mode="bilinear", antialias=True),
     seed=70)
case("interp_bicubic_aa_scale", [[1, 1, 9, 8]],
     lambda x: F.interpolate(x, scale_factor=0.45, mode="bicubic", antialias=True, align_corners=True), seed=71)
case("interp_bilinear_aa_up", [[1, 1, 3, 4]],
     lambda x: F.interpolate(x, scale_factor=(1.5, 0.5), mode="bilinear", antialias=True), seed=72)

# the functional pools (F.adaptive_max_pool*, F.lp_pool*, F.fractional_max_pool*), some with given
# _random_samples; appended after the cases above so that those stay as they were
SAMPLES_2D = [0.1, 0.9, 0.25, 0.5, 0.75, 0.0, 0.375, 0.625, 0.5, 0.125, 0.875, 0.3]
SAMPLES_3D = [0.2, 0.6, 0.95, 0.0, 0.5, 0.25]
case("f_adaptive_max1d", [[2, 3, 9]], lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True), seed=80)
case("f_adaptive_max2d_unbatched", [[2, 5, 4]], lambda x: F.adaptive_max_pool2d(x, (None, 2)), seed=81)
case("f_adaptive_max3d", [[1, 2, 4, 3, 5]],
     lambda x: F.adaptive_max_pool3d(x, (2, None, 3), return_indices=True), seed=82)
case("f_lppool1d", [[2, 2, 7]], lambda x: F.lp_pool1d(x, 2, 3), seed=83)
case("f_lppool1d_ceil", [[1, 2, 6]], lambda x: F.lp_pool1d(x.abs() + 0.1, 1.5, 2, stride=1, ceil_mode=True),
     seed=84)
case("f_lppool2d", [[1, 2, 5, 6]], lambda x: F.lp_pool2d(x.abs() + 0.1, 3, (2, 2), (1, 2), ceil_mode=True),
     seed=85)
case("f_fractional2d_size", [[1, 2, 6, 7]],
     lambda x: F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True), seed=86)
case("f_fractional2d_samples", [[2, 3, 7, 8]],
     lambda x: F.fractional_max_pool2d(x, (2, 3), output_ratio=0.6, return_indices=True,
                                       _random_samples=torch.tensor(SAMPLES_2D, dtype=torch.float64).reshape(2, 3, 2)),
     seed=87)
case("f_fractional3d_ratio", [[2, 1, 5, 6, 5]],
     lambda x: F.fractional_max_pool3d(x, (2, 1, 2), output_ratio=(0.5, 0.7, 0.6), return_indices=True), seed=88)
case("f_fractional3d_samples_unbatched", [[2, 4, 5, 6]],
     lambda x: F.fractional_max_pool3d(x, 2, output_size=(2, 3, 3),
                                       _random_samples=torch.tensor(SAMPLES_3D, dtype=torch.float64).reshape(1, 2, 3)),
     seed=89)
case("fractional2d_module_samples", [[2, 3, 7, 8]],
     lambda x: nn.FractionalMaxPool2d(
         2, output_size=(4, 3), _random_samples=torch.tensor(SAMPLES_2D, dtype=torch.float64).reshape(2, 3, 2))(x),
     seed=90)

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn_spatial_more.json"),
          "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
