#!/usr/bin/env python3
"""Writes test/golden/torch/module_api.json: torch.nn.Module's bookkeeping in PyTorch 1.13 for
test/torch/module-api.test.ts. A model with a convolution, BatchNorm2d, a Linear registered under
three names (twice in a Sequential and once as an attribute), a non-persistent float buffer and an
int64 buffer: the names of named_modules / named_children / named_parameters / named_buffers
(shared things once), the state_dict keys (the shared Linear under each name, the non-persistent
buffer left out), the dtype of every parameter and buffer after double(), half(), bfloat16() and
float(), and repr() of the model and of a few layers' extra_repr (the recurrent layers' among
them); then a Sequential of Linear/ReLU/Linear with forward pre-hooks and hooks (a replaced input,
captured activations, a replaced output, removal) on fixed weights and input.
Run: /usr/bin/python3 scripts/golden/module_api.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        shared = nn.Linear(4, 4)
        self.head = nn.Sequential(shared, nn.ReLU(), shared)
        self.aux = shared
        self.register_buffer("scale", torch.ones(4), persistent=False)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))


def dtype_name(t):
    return str(t.dtype).replace("torch.", "")


def tensor_dtypes(m):
    """Every parameter and buffer by its first name, with dtype and requires_grad."""
    out = {}
    for name, p in m.named_parameters():
        out[name] = {"dtype": dtype_name(p), "requires_grad": p.requires_grad}
    for name, b in m.named_buffers():
        out[name] = {"dtype": dtype_name(b), "requires_grad": b.requires_grad}
    return out


torch.manual_seed(0)
net = Net()
tree = {
    "named_modules": [n for n, _ in net.named_modules()],
    "named_children": [n for n, _ in net.named_children()],
    "head_children": [n for n, _ in net.head.named_children()],
    "named_parameters": [n for n, _ in net.named_parameters()],
    "named_buffers": [n for n, _ in net.named_buffers()],
    "state_dict_keys": list(net.state_dict().keys()),
    "num_modules": len(list(net.modules())),
    "num_children": len(list(net.children())),
    "repr": repr(net),
}
conversions = {}
for method in ["double", "half", "bfloat16", "float"]:
    getattr(net, method)()
    conversions[method] = tensor_dtypes(net)

layers = {
    "linear_no_bias": nn.Linear(3, 5, bias=False),
    "batchnorm1d": nn.BatchNorm1d(6, eps=1e-3, momentum=0.01, affine=False),
    "batchnorm2d_no_stats": nn.BatchNorm2d(2, track_running_stats=False),
    "layernorm": nn.LayerNorm([4, 5], eps=1e-6, elementwise_affine=False),
    "dropout": nn.Dropout(0.2),
    "conv2d": nn.Conv2d(3, 8, (1, 7), stride=2, padding=(0, 3), bias=False),
    "conv1d_same": nn.Conv1d(2, 4, 3, padding="same", dilation=2),
    "conv1d_valid": nn.Conv1d(2, 4, 3, padding="valid"),
    "conv2d_reflect": nn.Conv2d(2, 2, 3, padding=1, padding_mode="reflect", groups=2),
    "conv_transpose2d": nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2),
    "conv3d": nn.Conv3d(1, 2, 3),
    "lstm": nn.LSTM(10, 20, num_layers=2, batch_first=True, bidirectional=True),
    "lstm_plain": nn.LSTM(4, 5),
    "gru": nn.GRU(3, 6, bias=False, dropout=0.25),
    "gru_dropout_one": nn.GRU(3, 6, num_layers=3, dropout=1),
    "rnn_relu": nn.RNN(2, 3, nonlinearity="relu", bidirectional=True),
}
reprs = {k: repr(v) for k, v in layers.items()}

# Hooks on a Sequential of Linear/ReLU/Linear.
torch.manual_seed(1)
seq = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
params = {k: v.detach().reshape(-1).tolist() for k, v in seq.state_dict().items()}
x = torch.randn(2, 4)
order = []
captured = {}


def capture(name):
    def hook(module, inputs, output):
        order.append("post:" + name)
        captured[name] = output.detach().reshape(-1).tolist()

    return hook


def pre_shift(module, inputs):
    order.append("pre:0")
    return inputs[0] + 1.0  # a non-tuple result: the only argument, as PyTorch wraps it


def pre_second(module, inputs):
    order.append("pre:0b")


def double_output(module, inputs, output):
    order.append("post:2double")
    return output * 2.0


with torch.no_grad():
    plain = seq(x).reshape(-1).tolist()
    handles = [
        seq[0].register_forward_pre_hook(pre_shift),
        seq[0].register_forward_pre_hook(pre_second),
        seq[0].register_forward_hook(capture("0")),
        seq[1].register_forward_hook(capture("1")),
        seq[2].register_forward_hook(double_output),
        seq[2].register_forward_hook(capture("2")),
        seq.register_forward_hook(capture("seq")),
    ]
    hooked = seq(x).reshape(-1).tolist()
    for h in handles:
        h.remove()
    removed = seq(x).reshape(-1).tolist()

hooks = {
    "params": params,
    "input": x.reshape(-1).tolist(),
    "input_shape": list(x.shape),
    "plain": plain,
    "hooked": hooked,
    "order": order,
    "captured": captured,
    "removed": removed,
}

out = {"tree": tree, "conversions": conversions, "reprs": reprs, "hooks": hooks}
path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "module_api.json")
with open(path, "w") as f:
    json.dump(out, f, indent=1)
print("wrote", os.path.normpath(path))
