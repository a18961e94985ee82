#!/usr/bin/env python3
"""Writes test/golden/torch/nn3d.json: Conv3d, BatchNorm3d, MaxPool3d, AvgPool3d and
AdaptiveAvgPool3d from PyTorch 1.13, in the layer format of nn.json (scripts/golden/nn.py): the
parameters initialised from a fixed seed, input, output, the gradients of the input and every
parameter, and the running statistics after the pass. Small shapes, so the test stays light.
Run: /usr/bin/python3 scripts/golden/nn3d.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
cases = []


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def layer_case(name, make, input_shape, seed=0, train=True):
    torch.manual_seed(seed)
    layer = make()
    layer.train(train)
    params = {k: {"shape": list(v.shape), "data": flat(v)} for k, v in layer.state_dict().items()
              if v.dtype.is_floating_point}
    torch.manual_seed(seed + 1)
    x = torch.randn(*input_shape, requires_grad=True)
    y = layer(x)
    w = torch.randn(*y.shape)
    (y * w).sum().backward()
    cases.append({
        "kind": "layer", "name": name, "seed": seed, "train": train,
        "params": params,
        "input": {"shape": input_shape, "data": flat(x)},
        "output": {"shape": list(y.shape), "data": flat(y)},
        "upstream": flat(w),
        "input_grad": flat(x.grad),
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
        "buffers_after": {k: flat(v) for k, v in layer.named_buffers() if v.dtype.is_floating_point},
    })


def bn3d_eval():
    """Evaluation mode with running statistics that are not the initial ones."""
    bn = nn.BatchNorm3d(3, eps=1e-3)
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor([0.5, -1.0, 0.25]))
        bn.running_var.copy_(torch.tensor([2.0, 0.5, 1.5]))
        bn.weight.copy_(torch.tensor([1.5, 0.5, -1.0]))
        bn.bias.copy_(torch.tensor([0.1, 0.2, -0.3]))
    return bn


layer_case("conv3d", lambda: nn.Conv3d(2, 3, 3, padding=1), [2, 2, 4, 4, 4])
layer_case("conv3d_groups_dilation_stride", lambda: nn.Conv3d(4, 6, 2, stride=2, padding=1, dilation=2, groups=2),
           [1, 4, 5, 5, 5], seed=1)
layer_case("conv3d_nobias", lambda: nn.Conv3d(3, 2, 1, bias=False), [2, 3, 2, 3, 4], seed=2)
layer_case("batchnorm3d_train", lambda: nn.BatchNorm3d(3, momentum=0.2), [2, 3, 3, 3, 3], seed=3)
layer_case("batchnorm3d_eval", bn3d_eval, [2, 3, 2, 3, 3], seed=4, train=False)
layer_case("maxpool3d", lambda: nn.MaxPool3d(2), [2, 2, 4, 4, 4], seed=5)
layer_case("maxpool3d_stride_padding", lambda: nn.MaxPool3d(3, 2, 1), [1, 2, 5, 5, 5], seed=6)
layer_case("avgpool3d", lambda: nn.AvgPool3d(2), [2, 2, 4, 4, 4], seed=7)
layer_case("avgpool3d_stride_padding", lambda: nn.AvgPool3d(3, 2, 1), [1, 2, 5, 5, 5], seed=8)
layer_case("adaptiveavgpool3d_global", lambda: nn.AdaptiveAvgPool3d(1), [2, 3, 3, 4, 5], seed=9)
layer_case("adaptiveavgpool3d_sizes", lambda: nn.AdaptiveAvgPool3d((2, 3, 2)), [1, 2, 5, 4, 3], seed=10)

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn3d.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
