#!/usr/bin/env python3
"""Writes test/golden/torch/nn_recurrent_more.json: RNN (tanh and relu, stacked, bidirectional,
batch-first, without bias, unbatched), RNNCell, LSTMCell, GRUCell (batched and unbatched, with and
without states), Bilinear, CosineSimilarity, LocalResponseNorm (3-d, 4-d, 5-d), Softmax2d,
Tanhshrink, Softshrink, Hardshrink, RReLU (evaluation, and training with its seeded slopes),
AlphaDropout and FeatureAlphaDropout (training with seeded masks, evaluation) from PyTorch 1.13.
Each case: the parameters initialised in float32 from a fixed seed, then the layer in float64, the
inputs (the input and any initial states), the outputs flattened (output, final states), the
upstream gradients and the gradients of every input and parameter. The global generator is seeded
again (seed + 2) right before the forward pass, for the layers that draw.
Run: /usr/bin/python3 scripts/golden/nn_recurrent_more.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
cases = []


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def data(t):
    return {"shape": list(t.shape), "data": flat(t)}


def case(name, make, input_shapes, run=None, seed=0, scale=1.0, train=True):
    """The layer built after manual_seed(seed) (float32 draws, then double()), inputs drawn after
    manual_seed(seed + 1), the forward pass `run(layer, *inputs)` (default layer(*inputs)) after
    manual_seed(seed + 2), every output weighted by drawn upstream gradients and summed."""
    torch.manual_seed(seed)
    layer = make()
    init = {k: data(p) for k, p in layer.named_parameters()}
    layer.double().train(train)
    torch.manual_seed(seed + 1)
    inputs = [(torch.randn(*s, dtype=torch.float64) * scale).requires_grad_() for s in input_shapes]
    torch.manual_seed(seed + 2)
    out = (run or (lambda m, *xs: m(*xs)))(layer, *inputs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    flat_outs = []
    for o in outs:
        flat_outs.extend(o if isinstance(o, (list, tuple)) else [o])
    upstream = [torch.randn(*o.shape, dtype=torch.float64) for o in flat_outs]
    sum((o * w).sum() for o, w in zip(flat_outs, upstream)).backward()
    cases.append({
        "name": name, "seed": seed, "train": train, "init": init,
        "inputs": [data(x) for x in inputs],
        "outputs": [data(o) for o in flat_outs],
        "upstream": [flat(w) for w in upstream],
        "input_grads": [flat(x.grad) for x in inputs],
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
    })


# Elman RNN: the fused kernels rnn_tanh / rnn_relu, initial state given or zeros.
case("rnn_tanh", lambda: nn.RNN(5, 4), [[6, 3, 5]], seed=1)
case("rnn_relu_2layer_bidirectional_batch_first_h0",
     lambda: nn.RNN(3, 4, num_layers=2, nonlinearity="relu", bidirectional=True, batch_first=True),
     [[2, 5, 3], [4, 2, 4]], seed=2)
case("rnn_nobias_unbatched_h0", lambda: nn.RNN(3, 2, bias=False), [[4, 3], [1, 2]], seed=3)
case("rnn_dropout_eval", lambda: nn.RNN(2, 3, num_layers=2, dropout=0.5), [[3, 2, 2]], seed=4, train=False)

# Cells: one step, batched or unbatched, state given or zeros.
case("rnncell_tanh_h", lambda: nn.RNNCell(5, 4), [[3, 5], [3, 4]], seed=10)
case("rnncell_relu_nobias_unbatched", lambda: nn.RNNCell(3, 4, bias=False, nonlinearity="relu"), [[3]],
     seed=11, scale=2.0)
case("lstmcell_state", lambda: nn.LSTMCell(5, 3), [[2, 5], [2, 3], [2, 3]],
     run=lambda m, x, h, c: m(x, (h, c)), seed=12)
case("lstmcell_unbatched", lambda: nn.LSTMCell(4, 3), [[4]], seed=13)
case("lstmcell_nobias_unbatched_state", lambda: nn.LSTMCell(2, 3, bias=False), [[2], [3], [3]],
     run=lambda m, x, h, c: m(x, (h, c)), seed=14)
case("grucell_h", lambda: nn.GRUCell(4, 3), [[2, 4], [2, 3]], seed=15)
case("grucell_nobias_unbatched_h", lambda: nn.GRUCell(3, 2, bias=False), [[3], [2]], seed=16)
case("grucell_nohx", lambda: nn.GRUCell(3, 5), [[2, 3]], seed=17)

# Bilinear, similarity, local response normalisation, Softmax2d.
case("bilinear", lambda: nn.Bilinear(3, 4, 2), [[5, 3], [5, 4]], seed=20)
case("bilinear_nobias_3d", lambda: nn.Bilinear(2, 3, 4, bias=False), [[2, 3, 2], [2, 3, 3]], seed=21)
case("cosine", lambda: nn.CosineSimilarity(), [[4, 5], [4, 5]], seed=22)
case("cosine_dim_eps_broadcast", lambda: nn.CosineSimilarity(dim=-1, eps=0.5), [[3, 1, 4], [2, 4]], seed=23,
     scale=0.3)
case("lrn_3d", lambda: nn.LocalResponseNorm(3), [[2, 5, 4]], seed=24, scale=3.0)
case("lrn_4d", lambda: nn.LocalResponseNorm(2, alpha=0.1, beta=0.5, k=2.0), [[2, 4, 3, 3]], seed=25, scale=2.0)
case("lrn_5d", lambda: nn.LocalResponseNorm(4, alpha=0.01), [[1, 5, 2, 2, 3]], seed=26, scale=3.0)
case("softmax2d", lambda: nn.Softmax2d(), [[2, 3, 2, 2]], seed=27)
case("softmax2d_unbatched", lambda: nn.Softmax2d(), [[3, 2, 4]], seed=28)

# Shrink activations and RReLU (inputs scaled so that both sides of the thresholds are hit).
case("tanhshrink", lambda: nn.Tanhshrink(), [[3, 8]], seed=30, scale=2.0)
case("softshrink", lambda: nn.Softshrink(), [[3, 8]], seed=31)
case("softshrink_1", lambda: nn.Softshrink(1.0), [[3, 8]], seed=32, scale=2.0)
case("hardshrink", lambda: nn.Hardshrink(0.3), [[3, 8]], seed=33)
case("rrelu_eval", lambda: nn.RReLU(0.1, 0.3), [[3, 8]], seed=34, train=False)
case("rrelu_train", lambda: nn.RReLU(), [[4, 8]], seed=35)

# Alpha dropout: seeded masks in training mode, the identity in evaluation mode.
case("alphadropout_train", lambda: nn.AlphaDropout(0.2), [[4, 6]], seed=40)
case("alphadropout_eval", lambda: nn.AlphaDropout(), [[4, 6]], seed=41, train=False)
case("featurealphadropout_train", lambda: nn.FeatureAlphaDropout(0.5), [[3, 6, 2]], seed=42)
case("featurealphadropout_eval", lambda: nn.FeatureAlphaDropout(0.3), [[2, 3, 2]], seed=43, train=False)

with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn_recurrent_more.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
