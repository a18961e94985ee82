#!/usr/bin/env python3
"""Writes test/golden/torch/module_hooks_options.json: global module hooks and state-dict hooks in
PyTorch 1.13 on fixed weights. Global forward pre-hooks, forward hooks and full backward hooks
around a small MLP with hooks of its own on one layer (the order of every call, forward and
backward, a global pre-hook scaling the input of every Linear, the output and gradients); a
state-dict hook adding and renaming keys (the keys each call sees); a load pre-hook renaming the
keys of an old checkpoint and load post-hooks reading the incompatible keys and dropping a
tolerated one so that a strict load passes. PyTorch 1.13 has no prepend or with_kwargs options and
no state-dict pre-hook: those are checked in the test against PyTorch 2.x's documented behaviour.
Run: /usr/bin/python3 scripts/golden/module_hooks_options.py"""
import inspect
import json
import os

import torch
import torch.nn as nn
import torch.nn.modules.module as nn_module

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)
out = {}

# PyTorch 1.13's signatures: no prepend, with_kwargs or always_call (PyTorch 2.x's).
out["signatures"] = {
    name: list(inspect.signature(getattr(nn.Module, name)).parameters)
    for name in ("register_forward_pre_hook", "register_forward_hook", "register_full_backward_hook")
}


def flat(t):
    return None if t is None else t.detach().reshape(-1).double().tolist()


def state(m):
    return {k: {"shape": list(v.shape), "data": flat(v)} for k, v in m.state_dict().items()}


def grads(m):
    return {k: flat(p.grad) for k, p in m.named_parameters()}


def name_of(model, module):
    return next(n for n, m in model.named_modules() if m is module) or "root"


# Global hooks before a module's own: forward and backward order, a global pre-hook doubling
# the input of every Linear, a global forward hook adding 1 to Tanh's output.
torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
x = torch.randn(5, 3, requires_grad=True)
order = []


def global_pre(m, args):
    order.append(["global_pre", name_of(mlp, m)])
    return (args[0] * 2,) if isinstance(m, nn.Linear) else None


def global_fwd(m, args, output):
    order.append(["global_forward", name_of(mlp, m)])
    return output + 1 if isinstance(m, nn.Tanh) else None


def global_bwd(m, gi, go):
    order.append(["global_backward", name_of(mlp, m)])


handles = [
    nn_module.register_module_forward_pre_hook(global_pre),
    nn_module.register_module_forward_hook(global_fwd),
    nn_module.register_module_full_backward_hook(global_bwd),
]
mlp[0].register_forward_pre_hook(lambda m, a: order.append(["own_pre", "0"]))
mlp[0].register_forward_hook(lambda m, a, o: order.append(["own_forward", "0"]))
mlp[0].register_full_backward_hook(lambda m, gi, go: order.append(["own_backward", "0"]))
y = mlp(x)
(y * torch.arange(10.).reshape(5, 2)).sum().backward()
n_calls = len(order)
for h in handles:
    h.remove()
# With the global hooks removed, only the modules' own hooks run.
mlp[2].register_forward_hook(lambda m, a, o: order.append(["own_forward", "2"]))
after = mlp(x.detach())
out["global"] = {"params": state(mlp), "input": flat(x), "input_shape": list(x.shape),
                 "order": order[:n_calls], "output": flat(y), "grads": grads(mlp), "input_grad": flat(x.grad),
                 "order_after_remove": order[n_calls:], "output_after_remove": flat(after)}

# State-dict hooks (1.13's _register_state_dict_hook, 2.x's register_state_dict_post_hook): the
# keys each call sees, in the order of the calls; the inner one adds a key, the outer renames one.
torch.manual_seed(1)
net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
seen = []


def inner_hook(m, sd, prefix, meta):
    seen.append(["1", prefix, list(sd.keys())])
    sd[prefix + "extra"] = torch.tensor([7.0])


def outer_hook(m, sd, prefix, meta):
    seen.append(["root", prefix, list(sd.keys())])
    sd["head.weight"] = sd.pop("0.weight")


net[1]._register_state_dict_hook(inner_hook)
net._register_state_dict_hook(outer_hook)
sd = net.state_dict()
out["state_dict_hooks"] = {"seen": seen, "keys": sorted(sd.keys()), "extra": flat(sd["1.extra"])}

# Load hooks: the checkpoint names layer 0's weight 'w' (an old format); the pre-hook of layer 0
# renames it, the post-hooks see the incompatible keys and layer 1's drops its missing 'count'
# and the stray key under it, so that the strict load passes.


class Gain(nn.Module):
    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.tensor([1.0, 2.0]))
        self.register_buffer("count", torch.tensor([0.0]))

    def forward(self, x):
        return x * self.gain


torch.manual_seed(2)
src = nn.Sequential(nn.Linear(2, 2), Gain())
with torch.no_grad():
    src[1].gain.fill_(0.25)
ckpt = {k: v.clone() for k, v in src.state_dict().items()}
ckpt["0.w"] = ckpt.pop("0.weight")
del ckpt["1.count"]
ckpt["1.stray"] = torch.tensor([1.0])
load_seen = []


def rename_pre(m, sd, prefix, meta, strict, missing, unexpected, errors):
    load_seen.append(["pre0", prefix, sorted(sd.keys()), list(missing), list(unexpected)])
    if prefix + "w" in sd:
        sd[prefix + "weight"] = sd.pop(prefix + "w")


def post1(m, keys):
    load_seen.append(["post1", list(keys.missing_keys), list(keys.unexpected_keys)])
    keys.missing_keys.remove("1.count")
    keys.unexpected_keys.remove("1.stray")


def post_root(m, keys):
    load_seen.append(["postroot", list(keys.missing_keys), list(keys.unexpected_keys)])


torch.manual_seed(3)
dst = nn.Sequential(nn.Linear(2, 2), Gain())
dst[0]._register_load_state_dict_pre_hook(rename_pre, with_module=True)
dst[1].register_load_state_dict_post_hook(post1)
dst.register_load_state_dict_post_hook(post_root)
result = dst.load_state_dict(ckpt, strict=True)
out["load_hooks"] = {"checkpoint": {k: {"shape": list(v.shape), "data": flat(v)} for k, v in ckpt.items()},
                     "seen": load_seen, "missing": result.missing_keys, "unexpected": result.unexpected_keys,
                     "loaded": state(dst)}

path = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "module_hooks_options.json")
with open(path, "w") as f:
    json.dump(out, f)
print("wrote", path)
