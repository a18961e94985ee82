# The PyTorch side of bench/ops.ts: the dispatcher operators of one training step of the
# Fashion-MNIST-LT multi-expert model (bench/longtail_torch.py), the step bench/epoch_gpu_torch.py
# captures in its CUDA graph (forward, loss, backward, SGD with foreach=True, the loss added to a
# total; gradients set to None before it), after three warm-up steps, counted with the autograd
# profiler (bench/op_counts.py). Usage: python3 ops_torch.py SPEC.json...; prints one JSON line
# {operator: calls} per spec, in their order (one process for several: importing torch takes
# seconds). Each spec starts from the same seeds, as in a process of its own.
import json
import sys

import numpy as np
import torch

from longtail_torch import Experiment
from op_counts import count_ops


def counts_of(spec):
    """The operator calls of one captured step of the spec's experiment."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    experiment = Experiment(spec)
    E, batch, classes = experiment.E, spec["batch"], spec["classes"]
    C, H, W = spec["shape"]
    opt = torch.optim.SGD(
        [p for g in experiment.opt.param_groups for p in g["params"]],
        lr=spec["lr"],
        momentum=spec["momentum"],
        weight_decay=spec["weight_decay"],
        nesterov=spec["nesterov"],
        foreach=True,
    )
    x = torch.randn(batch, C, H, W)
    y = torch.from_numpy(rng.integers(0, classes, size=batch))
    total = torch.zeros(())
    prl = experiment.prl

    def draws():
        # drawn outside the step: the graph reads them from static tensors
        if not prl:
            return None
        return [torch.tensor(rng.dirichlet([prl["alpha"]] * E), dtype=torch.float32) for _ in range(prl["draws"])]

    def step(r):
        _, loss = experiment.forward_loss(x, y, r)
        loss.backward()
        opt.step()
        total.add_(loss.detach())

    for _ in range(3):
        step(draws())
        opt.zero_grad(set_to_none=True)
    r = draws()
    return count_ops(lambda: step(r))


for path in sys.argv[1:]:
    with open(path) as f:
        print(json.dumps(counts_of(json.load(f))), flush=True)
