#!/usr/bin/env python3
"""Writes test/golden/torch/nn_norm_activation_shape.json: InstanceNorm1d/2d/3d (affine, running statistics in
training and evaluation mode, unbatched inputs), PReLU, ReLU6, Hardtanh, Hardswish, Hardsigmoid,
Mish, LogSigmoid, Softsign, Softmin, GLU, SELU, CELU, Threshold, PixelShuffle, PixelUnshuffle,
ChannelShuffle, Unflatten and the padding layers (ZeroPad2d, ConstantPad, ReflectionPad,
ReplicationPad 1d/2d/3d; PyTorch 2.x's ZeroPad1d/3d and CircularPad1d/2d/3d as ConstantPad and
F.pad(mode='circular')) from PyTorch 1.13: the parameters initialised from a fixed seed, the
state (parameters and buffers) right before the checked forward pass, input, output, the
gradients of the input and every parameter, and the buffers after. Tiny shapes.
Run: /usr/bin/python3 scripts/golden/nn_norm_activation_shape.py"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
cases = []


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def state_of(layer):
    return {k: {"shape": list(v.shape), "data": flat(v)} for k, v in layer.state_dict().items()}


def layer_case(name, make, input_shape, seed=0, scale=1.0, train=True, warmup=None, perturb=False):
    """The layer built after manual_seed(seed); `warmup` input shapes run first in training mode
    (so running statistics move), `perturb` draws the parameters (an affine of ones and zeros
    would hide a wrong scale), then the checked pass in training or evaluation mode."""
    torch.manual_seed(seed)
    layer = make()
    init = state_of(layer)
    torch.manual_seed(seed + 1)
    for shape in warmup or []:
        layer.train()
        with torch.no_grad():
            layer(torch.randn(*shape) * 2 + 0.5)
    if perturb:
        with torch.no_grad():
            for p in layer.parameters():
                p.normal_(0.5, 0.5)
    before = state_of(layer)
    layer.train(train)
    x = (torch.randn(*input_shape) * scale).requires_grad_()
    y = layer(x)
    w = torch.randn(*y.shape)
    (y * w).sum().backward()
    cases.append({
        "name": name, "seed": seed, "train": train,
        "init": init, "state_before": before,
        "input": {"shape": input_shape, "data": flat(x)},
        "output": {"shape": list(y.shape), "data": flat(y)},
        "upstream": flat(w),
        "input_grad": flat(x.grad),
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
        "buffers_after": {k: flat(b) for k, b in layer.named_buffers()},
    })


# Instance normalisation: defaults, affine, running statistics (training updates them; evaluation
# uses them), unbatched inputs.
layer_case("instancenorm1d", lambda: nn.InstanceNorm1d(3), [2, 3, 7], seed=1)
layer_case("instancenorm1d_unbatched", lambda: nn.InstanceNorm1d(3), [3, 7], seed=2)
layer_case("instancenorm1d_affine", lambda: nn.InstanceNorm1d(4, affine=True), [2, 4, 5], seed=3, perturb=True)
layer_case("instancenorm2d_track_train", lambda: nn.InstanceNorm2d(3, momentum=0.3, track_running_stats=True),
           [2, 3, 4, 5], seed=4, warmup=[[2, 3, 4, 5]])
layer_case("instancenorm2d_track_eval", lambda: nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
           [2, 3, 4, 5], seed=5, train=False,
           warmup=[[3, 3, 4, 5], [2, 3, 4, 5]], perturb=True)
layer_case("instancenorm2d_eval_notrack", lambda: nn.InstanceNorm2d(2, affine=True), [2, 2, 3, 4], seed=6,
           train=False, perturb=True)
layer_case("instancenorm2d_unbatched_track_eval", lambda: nn.InstanceNorm2d(2, track_running_stats=True),
           [2, 3, 4], seed=7, train=False, warmup=[[2, 3, 4]])
layer_case("instancenorm3d_affine_track_unbatched",
           lambda: nn.InstanceNorm3d(3, eps=1e-3, affine=True, track_running_stats=True), [3, 2, 3, 4], seed=8,
           perturb=True)

# Activations (inputs scaled so that the clipped and the linear parts are both hit).
layer_case("prelu", lambda: nn.PReLU(), [2, 3, 4], seed=10)
layer_case("prelu_channels", lambda: nn.PReLU(3, init=0.1), [2, 3, 4, 5], seed=11)
layer_case("prelu_1d", lambda: nn.PReLU(init=-0.3), [4], seed=12)
layer_case("relu6", lambda: nn.ReLU6(), [3, 8], seed=13, scale=5.0)
layer_case("hardtanh", lambda: nn.Hardtanh(-0.5, 2.0), [3, 8], seed=14, scale=2.0)
layer_case("hardswish", lambda: nn.Hardswish(), [3, 8], seed=15, scale=4.0)
layer_case("hardsigmoid", lambda: nn.Hardsigmoid(), [3, 8], seed=16, scale=4.0)
layer_case("mish", lambda: nn.Mish(), [3, 8], seed=17, scale=3.0)
layer_case("logsigmoid", lambda: nn.LogSigmoid(), [3, 8], seed=18, scale=3.0)
layer_case("softsign", lambda: nn.Softsign(), [3, 8], seed=19, scale=3.0)
layer_case("softmin", lambda: nn.Softmin(dim=1), [2, 5, 3], seed=20)
layer_case("glu", lambda: nn.GLU(dim=1), [2, 6, 3], seed=21)
layer_case("glu_last", lambda: nn.GLU(), [3, 4], seed=22)
layer_case("selu", lambda: nn.SELU(), [3, 8], seed=23, scale=2.0)
layer_case("celu", lambda: nn.CELU(alpha=0.7), [3, 8], seed=24, scale=2.0)
layer_case("threshold", lambda: nn.Threshold(0.1, 20.0), [3, 8], seed=25)

# Rearrangements. PyTorch 1.13's channel_shuffle has no derivative: the gradients come from the
# same permutation written as reshape and transpose, checked equal to nn.ChannelShuffle's output.
class ChannelShuffleChecked(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.shuffle = nn.ChannelShuffle(groups)

    def forward(self, x):
        n, c = x.shape[:2]
        g = self.shuffle.groups
        y = x.reshape(n, g, c // g, *x.shape[2:]).transpose(1, 2).reshape(x.shape)
        assert torch.equal(y, self.shuffle(x.detach()))
        return y


layer_case("pixelshuffle", lambda: nn.PixelShuffle(2), [1, 8, 3, 3], seed=30)
layer_case("pixelshuffle_unbatched", lambda: nn.PixelShuffle(3), [9, 2, 2], seed=31)
layer_case("pixelunshuffle", lambda: nn.PixelUnshuffle(2), [2, 2, 4, 6], seed=32)
layer_case("channelshuffle", lambda: ChannelShuffleChecked(3), [2, 6, 2, 3], seed=33)
layer_case("unflatten", lambda: nn.Unflatten(1, (2, -1)), [2, 6, 3], seed=34)
layer_case("unflatten_last", lambda: nn.Unflatten(-1, (2, 2, 3)), [2, 12], seed=35)

# Padding: one number or PyTorch's tuple order, negative (cropping) sides, unbatched inputs.
layer_case("zeropad2d", lambda: nn.ZeroPad2d((1, 2, 0, -1)), [1, 2, 4, 5], seed=40)
layer_case("constantpad1d", lambda: nn.ConstantPad1d(2, 1.5), [2, 3, 4], seed=41)
layer_case("constantpad2d_unbatched", lambda: nn.ConstantPad2d((1, 0, 2, 1), -1.0), [2, 3, 4], seed=42)
layer_case("constantpad3d", lambda: nn.ConstantPad3d(1, 0.5), [1, 1, 2, 3, 2], seed=43)
layer_case("reflectionpad1d", lambda: nn.ReflectionPad1d((2, 3)), [2, 3, 5], seed=44)
layer_case("reflectionpad1d_unbatched_crop", lambda: nn.ReflectionPad1d((-1, 2)), [3, 5], seed=45)
layer_case("reflectionpad2d", lambda: nn.ReflectionPad2d((1, 2, 2, 0)), [1, 2, 4, 5], seed=46)
layer_case("reflectionpad3d", lambda: nn.ReflectionPad3d(1), [1, 2, 3, 3, 3], seed=47)
layer_case("replicationpad1d", lambda: nn.ReplicationPad1d((3, 1)), [2, 2, 4], seed=48)
layer_case("replicationpad2d_unbatched", lambda: nn.ReplicationPad2d((1, 2, 3, 0)), [2, 3, 4], seed=49)
layer_case("replicationpad3d", lambda: nn.ReplicationPad3d((1, 0, 2, 1, 0, 1)), [1, 2, 2, 3, 3], seed=50)


class Circular(nn.Module):
    """PyTorch 2.x's CircularPad1d/2d/3d, which 1.13 has as F.pad(mode='circular') only."""

    def __init__(self, pad):
        super().__init__()
        self.pad = pad

    def forward(self, x):
        # 1.13's circular mode needs the batch dimension; 2.x's layers take inputs without it.
        if x.dim() == len(self.pad) // 2 + 1:
            return F.pad(x.unsqueeze(0), self.pad, mode="circular").squeeze(0)
        return F.pad(x, self.pad, mode="circular")


# PyTorch 2.x's ZeroPad1d/3d (ConstantPad with 0) and CircularPad1d/2d/3d (F.pad, circular).
layer_case("zeropad1d", lambda: nn.ConstantPad1d((2, -1), 0.0), [2, 3, 4], seed=51)
layer_case("zeropad3d", lambda: nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 0.0), [1, 2, 2, 3, 2], seed=52)
layer_case("circularpad1d", lambda: Circular((2, 3)), [2, 3, 4], seed=53)
layer_case("circularpad1d_crop", lambda: Circular((-1, 2)), [2, 2, 5], seed=54)
layer_case("circularpad2d", lambda: Circular((1, 2, 3, 0)), [2, 2, 3, 4], seed=55)
layer_case("circularpad2d_unbatched", lambda: Circular((2, 1, 1, 3)), [2, 3, 4], seed=57)
layer_case("circularpad3d", lambda: Circular((1, 0, 2, 1, 0, 2)), [1, 2, 2, 3, 3], seed=56)

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn_norm_activation_shape.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
