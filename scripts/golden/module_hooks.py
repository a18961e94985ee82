#!/usr/bin/env python3
"""Writes test/golden/torch/module_hooks.json: module backward hooks and tensor hooks in
PyTorch 1.13 on fixed weights. Grad-CAM on a small CNN (a full backward hook on a conv layer
capturing its output gradient, a forward hook its activation), full backward hooks replacing
gradInput in an MLP (the parameters' .grad downstream of the replacement), the order of the hooks
of nested modules, a module of two inputs (one replaced, one dropped), a leaf hook over two
backward passes, and PyTorch 2.x's backward pre-hook emulated with a tensor hook on the output.
Tiny shapes, so the test stays light.
Run: /usr/bin/python3 scripts/golden/module_hooks.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
out = {}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


def state(m):
    return {k: {"shape": list(v.shape), "data": flat(v)} for k, v in m.state_dict().items()}


def grads(m):
    return {k: flat(p.grad) for k, p in m.named_parameters()}


# Grad-CAM: the conv's output gradient, averaged per channel, weighs its activation.
torch.manual_seed(0)
cnn = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.ReLU(), nn.Conv2d(2, 3, 3), nn.ReLU(),
                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(3, 4))
x = torch.randn(2, 1, 6, 6)
seen = {}
cnn[2].register_forward_hook(lambda m, i, o: seen.__setitem__("act", o.detach()))
cnn[2].register_full_backward_hook(
    lambda m, gi, go: seen.update(grad_out=go[0], grad_in=gi[0], n_in=len(gi), n_out=len(go)))
y = cnn(x)
y[:, 1].sum().backward()
weights = seen["grad_out"].mean(dim=(2, 3), keepdim=True)
cam = torch.relu((weights * seen["act"]).sum(1))
out["gradcam"] = {
    "params": state(cnn), "input": flat(x), "input_shape": list(x.shape), "target": 1,
    "activation": flat(seen["act"]), "grad_output": flat(seen["grad_out"]),
    "grad_output_shape": list(seen["grad_out"].shape), "grad_input": flat(seen["grad_in"]),
    "n_in": seen["n_in"], "n_out": seen["n_out"], "cam": flat(cam), "cam_shape": list(cam.shape),
    "grads": grads(cnn),
}

# gradInput replaced: layer 2 doubles its input gradient, layer 0's hook only looks.
torch.manual_seed(1)
mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
x = torch.randn(5, 3, requires_grad=True)
order = []
calls = {}


def recorder(name, replace=None):
    def hook(m, gi, go):
        order.append(name)
        calls[name] = {"grad_input": [flat(g) for g in gi], "grad_output": [flat(g) for g in go]}
        return replace(gi) if replace else None
    return hook


mlp[2].register_full_backward_hook(recorder("2", lambda gi: (gi[0] * 2,)))
mlp[0].register_full_backward_hook(recorder("0"))
mlp.register_full_backward_hook(recorder("seq"))
y = mlp(x)
(y * torch.arange(10.).reshape(5, 2)).sum().backward()
out["replace"] = {"params": state(mlp), "input": flat(x), "input_shape": list(x.shape),
                  "order": order, "calls": calls, "grads": grads(mlp), "input_grad": flat(x.grad)}

# The same with an input that does not require grad: the outer hook runs first, gradInput None.
order2 = []
mlp.zero_grad(set_to_none=True)
for m in (mlp, mlp[0], mlp[2]):
    m._backward_hooks.clear()
for name, m in (("seq", mlp), ("0", mlp[0]), ("2", mlp[2])):
    m.register_full_backward_hook(lambda m, gi, go, name=name: order2.append([name, [g is None for g in gi]]))
mlp(x.detach()).sum().backward()
out["order_no_input_grad"] = order2


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.tensor([1.5, -0.5, 2.0]))

    def forward(self, a, b, k):
        return a * b * self.scale + a.sin() * k


torch.manual_seed(2)
two = Two()
a = torch.randn(2, 3, requires_grad=True)
b = torch.randn(2, 3, requires_grad=True)
c = torch.randn(2, 3)
seen2 = {}


def two_hook(m, gi, go):
    seen2.update(gi=[flat(g) for g in gi], go=[flat(g) for g in go])
    return (gi[0] * 0.5, None, None)


two.register_full_backward_hook(two_hook)
z = two(a, b * 1.0, 3.0)
(z * c).sum().backward()
out["two_inputs"] = {"a": flat(a), "b": flat(b), "c": flat(c), "seen": seen2,
                     "a_grad": flat(a.grad), "b_grad": flat(b.grad), "scale_grad": flat(two.scale.grad)}

# A leaf hook over two backward passes: it sees each pass's gradient; .grad accumulates replacements.
w = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
leaf_seen = []
w.register_hook(lambda g: (leaf_seen.append(flat(g)), g * 3)[1])
(w * w).sum().backward()
(w.exp()).sum().backward()
out["leaf"] = {"w": flat(w), "seen": leaf_seen, "grad": flat(w.grad)}

# Backward pre-hook (PyTorch 2.x) emulated in 1.13: a tensor hook on the output doubles gradOutput.
torch.manual_seed(3)
pre = nn.Sequential(nn.Linear(3, 3), nn.Sigmoid(), nn.Linear(3, 1))
x = torch.randn(4, 3)
pre_seen = []


def out_hook(m, i, o):
    o.register_hook(lambda g: (pre_seen.append(flat(g)), g * 2)[1])


pre[0].register_forward_hook(out_hook)
pre(x).sum().backward()
out["pre"] = {"params": state(pre), "input": flat(x), "input_shape": list(x.shape),
              "seen": pre_seen, "grads": grads(pre)}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "module_hooks.json")
with open(path, "w") as f:
    json.dump(out, f)
print("wrote", path)
