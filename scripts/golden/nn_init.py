#!/usr/bin/env python3
"""Writes test/golden/torch/nn_init.json: torch.nn.init from PyTorch 1.13 -- every initialisation
on several shapes in float32 and float64, each drawn right after torch.manual_seed(seed) into a
fresh tensor, so that the values check both the formulas and the order of the generator's draws:
uniform_, normal_, constant_, zeros_, ones_, eye_, dirac_ (groups), orthogonal_ (tall, wide,
square and 4-d, with a gain), sparse_, trunc_normal_, kaiming_uniform_ / kaiming_normal_ (both
modes, several nonlinearities and slopes) and xavier_uniform_ / xavier_normal_; plus
calculate_gain for every name. Tiny shapes, so the tests stay light.
Run: /usr/bin/python3 scripts/golden/nn_init.py"""
import json
import os

import torch
import torch.nn.init as init

torch.set_num_threads(1)

cases = []


def case(fn, shape, args, seed, call):
    for dtype in ("float32", "float64"):
        torch.manual_seed(seed)
        t = torch.empty(*shape, dtype=getattr(torch, dtype))
        out = call(t)
        assert out is t
        cases.append({
            "fn": fn, "shape": list(shape), "dtype": dtype, "seed": seed, "args": args,
            "data": t.reshape(-1).double().tolist(),
        })


seed = 100


def nxt():
    global seed
    seed += 1
    return seed


for shape in ([5], [3, 4]):
    case("uniform_", shape, {"low": -0.5, "high": 2.0}, nxt(), lambda t: init.uniform_(t, -0.5, 2.0))
    case("uniform_", shape, {}, nxt(), lambda t: init.uniform_(t))
    case("normal_", shape, {"mean": 1.5, "std": 0.25}, nxt(), lambda t: init.normal_(t, 1.5, 0.25))
    case("constant_", shape, {"value": 0.3}, nxt(), lambda t: init.constant_(t, 0.3))
    case("zeros_", shape, {}, nxt(), init.zeros_)
    case("ones_", shape, {}, nxt(), init.ones_)

for shape in ([3, 3], [2, 4], [5, 2]):
    case("eye_", shape, {}, nxt(), init.eye_)

for shape, groups in (([4, 2, 3], 1), ([3, 5, 4], 1), ([6, 3, 3, 3], 2), ([4, 2, 2, 4], 1),
                      ([4, 4, 3, 2, 3], 2), ([2, 1, 3, 3, 3], 1)):
    case("dirac_", shape, {"groups": groups}, nxt(), lambda t, g=groups: init.dirac_(t, g))

for shape, gain in (([4, 4], 1.0), ([6, 3], 1.0), ([3, 6], 2.0), ([4, 2, 3, 3], 0.5), ([1, 5], 1.0)):
    case("orthogonal_", shape, {"gain": gain}, nxt(), lambda t, g=gain: init.orthogonal_(t, g))

for shape, sparsity, std in (([6, 4], 0.5, 0.01), ([5, 3], 0.1, 0.2), ([4, 4], 0.0, 1.0), ([3, 5], 1.0, 0.5)):
    case("sparse_", shape, {"sparsity": sparsity, "std": std}, nxt(),
         lambda t, s=sparsity, d=std: init.sparse_(t, s, d))

for shape, o in (([50], {}), ([7, 5], {"mean": 0.5, "std": 2.0, "a": -1.0, "b": 3.0}),
                 ([4, 6], {"mean": 0.0, "std": 0.02, "a": -0.04, "b": 0.04}),
                 ([30], {"mean": 0.0, "std": 1.0, "a": 0.5, "b": 1.0})):
    case("trunc_normal_", shape, o, nxt(), lambda t, o=o: init.trunc_normal_(t, **o))

kaiming = (
    ([4, 3], {}),
    ([4, 3, 2, 2], {"mode": "fan_out", "nonlinearity": "relu"}),
    ([5, 2, 3], {"a": 0.2, "mode": "fan_in", "nonlinearity": "leaky_relu"}),
    ([3, 6], {"a": 0.2, "mode": "fan_out", "nonlinearity": "tanh"}),
    ([2, 3, 2, 2, 2], {"nonlinearity": "selu"}),
    ([3, 4], {"nonlinearity": "conv_transpose2d"}),
)
for shape, o in kaiming:
    case("kaiming_uniform_", shape, o, nxt(), lambda t, o=o: init.kaiming_uniform_(t, **o))
    case("kaiming_normal_", shape, o, nxt(), lambda t, o=o: init.kaiming_normal_(t, **o))

for shape, gain in (([4, 3], 1.0), ([3, 2, 3, 3], init.calculate_gain("relu")), ([2, 5], 0.3)):
    case("xavier_uniform_", shape, {"gain": gain}, nxt(), lambda t, g=gain: init.xavier_uniform_(t, g))
    case("xavier_normal_", shape, {"gain": gain}, nxt(), lambda t, g=gain: init.xavier_normal_(t, g))

gains = []
for name in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
             "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu", "selu"):
    gains.append({"nonlinearity": name, "gain": init.calculate_gain(name)})
for param in (0.2, 0.0, 3):
    gains.append({"nonlinearity": "leaky_relu", "param": param, "gain": init.calculate_gain("leaky_relu", param)})

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn_init.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases, "gains": gains}, f)
print(f"wrote {out}: {len(cases)} cases, {len(gains)} gains")
