#!/usr/bin/env python3
"""Writes test/golden/torch/transformer.json: torch.nn.TransformerDecoder and torch.nn.Transformer
from PyTorch 1.13, in the format of attention.json (scripts/golden/nn.py): the parameters
initialised from a fixed seed (Transformer's xavier_uniform_ re-initialisation included), the
inputs, the masks, the outputs and the gradients of the inputs and every parameter, in evaluation
mode (dropout off). A mask given as {"subsequent": n} is Transformer.generate_square_subsequent_mask(n),
whose -inf JSON cannot hold; `subsequent_mask_4` holds that mask with -inf as null.
Run: /usr/bin/python3 scripts/golden/transformer.py"""
import json
import os

import torch
import torch.nn as nn

torch.set_num_threads(1)
cases = []


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def case(name, make, input_shapes, call, masks=None, seed=0):
    masks = masks or {}
    torch.manual_seed(seed)
    layer = make()
    layer.eval()
    torch.manual_seed(seed + 1)
    xs = [torch.randn(*s, requires_grad=True) for s in input_shapes]
    real = {k: (nn.Transformer.generate_square_subsequent_mask(m['subsequent']) if isinstance(m, dict) else m)
            for k, m in masks.items()}
    out = call(layer, xs, real)
    upstream = torch.randn(*out.shape)
    (out * upstream).sum().backward()
    cases.append({
        "name": name, "seed": seed, "train": False,
        "params": {k: {"shape": list(v.shape), "data": flat(v)} for k, v in layer.state_dict().items()},
        "inputs": [{"shape": list(x.shape), "data": flat(x)} for x in xs],
        "masks": {k: (m if isinstance(m, dict) else {"shape": list(m.shape), "data": flat(m), "dtype": str(m.dtype)})
                  for k, m in masks.items()},
        "outputs": [{"shape": list(out.shape), "data": flat(out)}],
        "upstream": [flat(upstream)],
        "input_grads": [flat(x.grad) for x in xs],
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
    })


pad_3x5 = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
pad_3x4 = torch.tensor([[False] * 4, [False] * 3 + [True], [False] * 2 + [True] * 2])
causal4 = torch.ones(4, 4, dtype=torch.bool).triu(1)
torch.manual_seed(31)
float_mask_4x5 = torch.randn(4, 5)
float_mask_5x5 = torch.randn(5, 5)
attend_4x5 = torch.rand(4, 5) < 0.3  # true: blocked
attend_4x5[:, 0] = False  # every query keeps a key

decode = lambda layer, xs, masks: layer(xs[0], xs[1], **masks)
model = lambda layer, xs, masks: layer(xs[0], xs[1], **masks)

case("decoder_2_layers_norm",
     lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, dim_feedforward=16), 2, norm=nn.LayerNorm(8)),
     [[4, 3, 8], [5, 3, 8]], decode, {"tgt_mask": causal4, "memory_key_padding_mask": pad_3x5}, seed=3)
case("decoder_3_layers_gelu_norm_first_batch_first",
     lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 4, dim_feedforward=12, activation="gelu",
                                                              norm_first=True, batch_first=True), 3),
     [[3, 4, 8], [3, 5, 8]], decode, {"memory_mask": float_mask_4x5, "tgt_key_padding_mask": pad_3x4}, seed=4)
case("transformer_small",
     lambda: nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=16),
     [[5, 3, 8], [4, 3, 8]], model,
     {"tgt_mask": {"subsequent": 4}, "src_key_padding_mask": pad_3x5, "memory_key_padding_mask": pad_3x5}, seed=5)
case("transformer_batch_first_norm_first_gelu",
     lambda: nn.Transformer(d_model=8, nhead=4, num_encoder_layers=1, num_decoder_layers=3, dim_feedforward=12,
                            activation="gelu", layer_norm_eps=1e-4, batch_first=True, norm_first=True),
     [[3, 5, 8], [3, 4, 8]], model,
     {"src_mask": float_mask_5x5, "memory_mask": attend_4x5, "tgt_key_padding_mask": pad_3x4}, seed=6)
case("transformer_unbatched",
     lambda: nn.Transformer(d_model=6, nhead=3, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=10),
     [[5, 6], [4, 6]], model, {"tgt_mask": {"subsequent": 4}}, seed=7)

mask = nn.Transformer.generate_square_subsequent_mask(4)
with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "transformer.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases,
               "subsequent_mask_4": [None if v == float("-inf") else v for v in flat(mask)]}, f)
