#!/usr/bin/env python3
"""Writes test/golden/torch/nn_more.json: ConvTranspose3d, max and average pooling with windows
that are not squares or cubes (a kernel size, stride and padding per axis), convolutions with
kernels and options per axis, the convolutions' 'same' and 'valid' paddings and their padding
modes, the pools' dilation, ceil_mode, count_include_pad and divisor_override, and max pooling
with indices undone by MaxUnpool, from PyTorch 1.13, in the layer format of nn3d.json
(scripts/golden/nn3d.py): the parameters initialised from a fixed seed, input, output, and the
gradients of the input and every parameter. Tiny shapes, so the test stays light.
Run: /usr/bin/python3 scripts/golden/nn_more.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
cases = []


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def layer_case(name, make, input_shape, seed=0):
    """nn3d.py's case format (training mode; these layers have no buffers)."""
    torch.manual_seed(seed)
    layer = make()
    params = {k: {"shape": list(v.shape), "data": flat(v)} for k, v in layer.state_dict().items()}
    torch.manual_seed(seed + 1)
    x = torch.randn(*input_shape, requires_grad=True)
    y = layer(x)
    w = torch.randn(*y.shape)
    (y * w).sum().backward()
    cases.append({
        "kind": "layer", "name": name, "seed": seed, "train": True,
        "params": params,
        "input": {"shape": input_shape, "data": flat(x)},
        "output": {"shape": list(y.shape), "data": flat(y)},
        "upstream": flat(w),
        "input_grad": flat(x.grad),
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
        "buffers_after": {},
    })


layer_case("convtranspose3d", lambda: nn.ConvTranspose3d(2, 3, 3, stride=2, padding=1, output_padding=1),
           [1, 2, 3, 3, 3], seed=20)
layer_case("convtranspose3d_groups_dilation_nobias",
           lambda: nn.ConvTranspose3d(4, 2, 2, groups=2, dilation=2, bias=False), [2, 4, 2, 3, 2], seed=21)
layer_case("convtranspose3d_stride_dilation_outpad",
           lambda: nn.ConvTranspose3d(1, 2, 2, stride=3, dilation=2, output_padding=2), [1, 1, 2, 2, 1], seed=22)
layer_case("maxpool1d_tuple", lambda: nn.MaxPool1d((3,), (2,), (1,)), [2, 2, 9], seed=23)
layer_case("avgpool1d_tuple", lambda: nn.AvgPool1d((4,), 3, (2,)), [1, 3, 10], seed=24)
layer_case("maxpool2d_rect", lambda: nn.MaxPool2d((2, 3), (1, 2), (0, 1)), [2, 2, 5, 7], seed=25)
layer_case("maxpool2d_rect_default_stride", lambda: nn.MaxPool2d((2, 3)), [1, 2, 6, 7], seed=26)
layer_case("avgpool2d_rect", lambda: nn.AvgPool2d((3, 2), (2, 1), (1, 0)), [2, 2, 6, 5], seed=27)
layer_case("maxpool3d_rect", lambda: nn.MaxPool3d((1, 2, 3), (1, 2, 1), (0, 1, 1)), [1, 2, 3, 4, 5], seed=28)
layer_case("avgpool3d_rect", lambda: nn.AvgPool3d((2, 1, 3), (1, 1, 2), (1, 0, 1)), [1, 2, 3, 4, 5], seed=29)
# Convolutions with kernels and options per axis (appended: the cases above stay as they were).
layer_case("conv1d_tuple", lambda: nn.Conv1d(2, 3, (3,), stride=(2,), padding=(1,), dilation=(2,)), [2, 2, 9], seed=30)
layer_case("conv2d_rect", lambda: nn.Conv2d(2, 4, (1, 3), stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=2),
           [2, 2, 5, 7], seed=31)
layer_case("conv3d_rect", lambda: nn.Conv3d(1, 2, (2, 1, 3), stride=(1, 2, 1), padding=(1, 0, 1), bias=False),
           [1, 1, 3, 4, 5], seed=32)
layer_case("convtranspose2d_rect",
           lambda: nn.ConvTranspose2d(2, 3, (2, 3), stride=(2, 1), padding=(1, 0), output_padding=(1, 0)),
           [1, 2, 3, 4], seed=33)
layer_case("convtranspose3d_rect",
           lambda: nn.ConvTranspose3d(1, 2, (1, 2, 3), stride=(1, 2, 2), dilation=(1, 1, 2), output_padding=(0, 1, 1)),
           [1, 1, 2, 3, 2], seed=34)
# String paddings: 'same' with odd totals (an extra zero after the input) and 'valid'.
layer_case("conv1d_same_even_kernel", lambda: nn.Conv1d(2, 3, 4, padding="same"), [2, 2, 9], seed=35)
layer_case("conv2d_same_dilation", lambda: nn.Conv2d(2, 2, (3, 4), padding="same", dilation=(2, 1)),
           [1, 2, 6, 7], seed=36)
layer_case("conv3d_same", lambda: nn.Conv3d(1, 2, (2, 3, 1), padding="same", bias=False), [1, 1, 3, 4, 2], seed=37)
layer_case("conv2d_valid", lambda: nn.Conv2d(2, 3, 3, padding="valid", stride=2), [1, 2, 7, 6], seed=38)
# Padding modes other than zeros.
layer_case("conv2d_reflect", lambda: nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), [1, 2, 5, 6], seed=39)
layer_case("conv1d_circular_same", lambda: nn.Conv1d(2, 2, 4, padding="same", padding_mode="circular"), [2, 2, 7],
           seed=40)
layer_case("conv3d_replicate", lambda: nn.Conv3d(1, 2, (1, 2, 3), padding=(0, 1, 1), padding_mode="replicate"),
           [1, 1, 2, 3, 4], seed=41)
layer_case("conv2d_reflect_rect_stride",
           lambda: nn.Conv2d(1, 2, (3, 2), stride=(2, 1), padding=(1, 1), padding_mode="reflect"), [1, 1, 6, 5], seed=42)

# The pools' options: dilation, ceil_mode (with a last window that would start in the right
# padding, which PyTorch drops), count_include_pad and divisor_override.
layer_case("maxpool2d_dilation_ceil",
           lambda: nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 0), dilation=(2, 1), ceil_mode=True),
           [1, 2, 7, 5], seed=43)
layer_case("maxpool1d_ceil_edge", lambda: nn.MaxPool1d(2, 3, 1, ceil_mode=True), [1, 2, 5], seed=44)
layer_case("avgpool2d_ceil_nocount",
           lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False), [1, 2, 6, 5], seed=45)
layer_case("avgpool1d_ceil_nocount", lambda: nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=False),
           [2, 1, 8], seed=46)
layer_case("avgpool3d_divisor", lambda: nn.AvgPool3d(2, 1, 0, divisor_override=3), [1, 1, 3, 3, 2], seed=47)



class PoolUnpool(nn.Module):
    """A max pool with return_indices, then MaxUnpool back to the input's size (or a given one)."""

    def __init__(self, pool, unpool, size=None):
        super().__init__()
        self.pool, self.unpool, self.size = pool, unpool, size

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i, output_size=self.size if self.size is not None else x.shape)


layer_case("unpool1d", lambda: PoolUnpool(nn.MaxPool1d(3, 2, 1, return_indices=True), nn.MaxUnpool1d(3, 2, 1)),
           [2, 2, 9], seed=48)
layer_case("unpool2d_rect", lambda: PoolUnpool(nn.MaxPool2d((2, 3), (2, 2), return_indices=True),
                                               nn.MaxUnpool2d((2, 3), (2, 2)), size=[5, 7]), [1, 2, 5, 7], seed=49)
layer_case("unpool3d", lambda: PoolUnpool(nn.MaxPool3d(2, 2, return_indices=True), nn.MaxUnpool3d(2, 2)),
           [1, 1, 4, 4, 5], seed=50)

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn_more.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
