"""Writes test/golden/torch/nn.json (rnn.json for LSTM and GRU, attention.json for attention and the
Transformer encoder): for each nn layer and loss, PyTorch 1.13's parameters
(initialised from a fixed seed), input, output and gradients. Run: python3 scripts/golden/nn.py
The TypeScript tests rebuild every case with the same seed and compare (max abs error 1e-5)."""
import json
import math
import os
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(1)
cases = []


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def layer_case(name, make, input_shape, seed=0, train=True, extra=None):
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
        "kind": "layer", "name": name, "seed": seed, "train": train, "extra": extra or {},
        "params": params,
        "input": {"shape": input_shape, "data": flat(x)},
        "output": {"shape": list(y.shape), "data": flat(y)},
        "upstream": flat(w),
        "input_grad": flat(x.grad),
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
        "buffers_after": {k: flat(v) for k, v in layer.named_buffers() if v.dtype.is_floating_point},
    })


layer_case("linear", lambda: nn.Linear(7, 5), [4, 7])
layer_case("linear_nobias", lambda: nn.Linear(7, 5, bias=False), [3, 7])
layer_case("conv2d", lambda: nn.Conv2d(3, 4, 3, stride=1, padding=1), [2, 3, 6, 6])
layer_case("conv2d_groups_dilation", lambda: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2), [2, 4, 9, 9])
layer_case("conv1d", lambda: nn.Conv1d(2, 4, 9, padding=8, dilation=2), [2, 2, 20])
layer_case("batchnorm2d_train", lambda: nn.BatchNorm2d(3), [4, 3, 5, 5])
layer_case("batchnorm1d_train", lambda: nn.BatchNorm1d(6), [8, 6])
layer_case("groupnorm", lambda: nn.GroupNorm(2, 4), [2, 4, 10])
layer_case("layernorm", lambda: nn.LayerNorm([6]), [3, 6])
layer_case("gelu", lambda: nn.GELU(), [3, 5])
layer_case("relu", lambda: nn.ReLU(), [3, 5])
layer_case("maxpool2d", lambda: nn.MaxPool2d(2), [2, 3, 6, 6])
layer_case("avgpool2d", lambda: nn.AvgPool2d(2), [2, 3, 6, 6])
layer_case("adaptiveavgpool2d", lambda: nn.AdaptiveAvgPool2d(1), [2, 3, 5, 5])

# eval-mode batch norm with non-trivial running statistics
def bn_eval():
    bn = nn.BatchNorm2d(3)
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor([0.5, -1.0, 2.0]))
        bn.running_var.copy_(torch.tensor([2.0, 0.5, 1.5]))
    return bn
layer_case("batchnorm2d_eval", bn_eval, [2, 3, 4, 4], train=False)
layer_case("leakyrelu", lambda: nn.LeakyReLU(0.2), [3, 5])
layer_case("silu", lambda: nn.SiLU(), [3, 5])
layer_case("elu", lambda: nn.ELU(0.7), [3, 5])
# threshold 1: both the smooth and the linear part
layer_case("softplus", lambda: nn.Softplus(beta=2, threshold=1), [3, 5])
layer_case("softmax", lambda: nn.Softmax(dim=1), [3, 5])
layer_case("logsoftmax", lambda: nn.LogSoftmax(dim=-1), [2, 3, 4])
layer_case("convtranspose1d", lambda: nn.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1), [2, 3, 7])
layer_case("convtranspose2d_groups_dilation",
           lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2),
           [2, 4, 5, 5])
layer_case("convtranspose2d_nobias", lambda: nn.ConvTranspose2d(2, 3, 2, stride=2, bias=False), [1, 2, 4, 4])
layer_case("upsample_nearest", lambda: nn.Upsample(scale_factor=(2, 3)), [2, 3, 4, 5])
layer_case("upsample_bilinear", lambda: nn.Upsample(scale_factor=(1.5, 2), mode="bilinear"), [2, 3, 4, 5])
layer_case("upsample_linear_size_aligned", lambda: nn.Upsample(size=9, mode="linear", align_corners=True), [2, 3, 4])
layer_case("sigmoid", lambda: nn.Sigmoid(), [3, 5])
layer_case("tanh", lambda: nn.Tanh(), [3, 5])
layer_case("maxpool1d", lambda: nn.MaxPool1d(3, stride=2, padding=1), [2, 3, 9])
layer_case("avgpool1d", lambda: nn.AvgPool1d(2), [2, 3, 8])
layer_case("adaptiveavgpool1d", lambda: nn.AdaptiveAvgPool1d(1), [2, 3, 7])


def loss_case(name, fn, logits_shape, target, extra=None):
    torch.manual_seed(7)
    x = torch.randn(*logits_shape, dtype=torch.float64, requires_grad=True)
    loss = fn(x, target)
    loss.backward()
    cases.append({
        "kind": "loss", "name": name, "extra": extra or {},
        "input": {"shape": logits_shape, "data": flat(x)},
        "target": {"shape": list(target.shape), "data": flat(target), "dtype": str(target.dtype)},
        "loss": loss.item(), "input_grad": flat(x.grad),
    })


torch.manual_seed(11)
labels = torch.randint(0, 5, (6,))
soft = torch.softmax(torch.randn(6, 5, dtype=torch.float64), 1)
weight = torch.tensor([1.0, 2.0, 0.5, 1.5, 1.0], dtype=torch.float64)
loss_case("cross_entropy", lambda x, t: F.cross_entropy(x, t), [6, 5], labels)
loss_case("cross_entropy_weight", lambda x, t: F.cross_entropy(x, t, weight=weight), [6, 5], labels,
          {"weight": weight.tolist()})
loss_case("cross_entropy_smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), [6, 5], labels,
          {"label_smoothing": 0.1})
loss_case("cross_entropy_soft", lambda x, t: F.cross_entropy(x, t), [6, 5], soft)
loss_case("mse", lambda x, t: F.mse_loss(x, t), [6, 5], soft)
loss_case("l1", lambda x, t: F.l1_loss(x, t), [6, 5], soft)
loss_case("normalize_cosine", lambda x, t: (F.normalize(x, dim=1) * t).sum(), [6, 5], soft)

def rnn_case(name, make, input_shape, with_state=False, seed=0):
    """An LSTM or GRU: parameters from the seed, output and final states, gradients of a weighted sum."""
    torch.manual_seed(seed)
    layer = make()
    torch.manual_seed(seed + 1)
    x = torch.randn(*input_shape, requires_grad=True)
    lstm = isinstance(layer, nn.LSTM)
    d = 2 if layer.bidirectional else 1
    batch = [] if len(input_shape) == 2 else [input_shape[0] if layer.batch_first else input_shape[1]]
    state_shape = [layer.num_layers * d, *batch, layer.hidden_size]
    state = None
    if with_state:
        h0 = torch.randn(*state_shape, requires_grad=True)
        state = (h0, torch.randn(*state_shape, requires_grad=True)) if lstm else h0
    out, final = layer(x, state) if state is not None else layer(x)
    finals = list(final) if lstm else [final]
    upstream = [torch.randn(*out.shape)] + [torch.randn(*f.shape) for f in finals]
    total = (out * upstream[0]).sum() + sum((f * u).sum() for f, u in zip(finals, upstream[1:]))
    total.backward()
    states = list(state) if lstm and state is not None else ([state] if state is not None else [])
    rnn_cases.append({
        "name": name, "seed": seed,
        "params": {k: {"shape": list(v.shape), "data": flat(v)} for k, v in layer.state_dict().items()},
        "input": {"shape": input_shape, "data": flat(x)},
        "state": [{"shape": list(t.shape), "data": flat(t)} for t in states],
        "output": {"shape": list(out.shape), "data": flat(out)},
        "finals": [{"shape": list(f.shape), "data": flat(f)} for f in finals],
        "upstream": [flat(u) for u in upstream],
        "input_grad": flat(x.grad),
        "state_grads": [flat(t.grad) for t in states],
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
    })


rnn_cases = []
rnn_case("lstm", lambda: nn.LSTM(5, 4), [7, 3, 5])
rnn_case("lstm_2layer_bidirectional_batch_first_state",
         lambda: nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True), [2, 6, 3], with_state=True)
rnn_case("gru_nobias", lambda: nn.GRU(5, 3, bias=False), [4, 2, 5])
rnn_case("gru_bidirectional_unbatched_state", lambda: nn.GRU(3, 4, bidirectional=True), [5, 3], with_state=True)
with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "rnn.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": rnn_cases}, f)


def sdpa_reference(q, k, v, attn_mask=None, is_causal=False):
    """PyTorch 2.x's F.scaled_dot_product_attention from its documented definition (1.13 lacks it)."""
    L, S = q.size(-2), k.size(-2)
    bias = torch.zeros(L, S, dtype=q.dtype)
    if is_causal:
        bias.masked_fill_(torch.ones(L, S, dtype=torch.bool).tril(diagonal=0).logical_not(), float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = bias.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            bias = bias + attn_mask
    weights = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + bias, dim=-1)
    return weights @ v


def attention_case(name, make, input_shapes, call, masks=None, seed=0, train=False):
    """A layer (or None for a function) applied by `call(layer, inputs, masks)` to random inputs and
    fixed masks; outputs (None where not returned), gradients of the inputs and every parameter."""
    masks = masks or {}
    torch.manual_seed(seed)
    layer = make()
    if layer is not None:
        layer.train(train)
    torch.manual_seed(seed + 1)
    xs = [torch.randn(*s, requires_grad=True) for s in input_shapes]
    outs = call(layer, xs, masks)
    upstream = [None if o is None else torch.randn(*o.shape) for o in outs]
    sum((o * u).sum() for o, u in zip(outs, upstream) if o is not None).backward()
    params = {} if layer is None else layer.state_dict()
    attention_cases.append({
        "name": name, "seed": seed, "train": train,
        "params": {k: {"shape": list(v.shape), "data": flat(v)} for k, v in params.items()},
        "inputs": [{"shape": list(x.shape), "data": flat(x)} for x in xs],
        "masks": {k: {"shape": list(m.shape), "data": flat(m), "dtype": str(m.dtype)} for k, m in masks.items()},
        "outputs": [None if o is None else {"shape": list(o.shape), "data": flat(o)} for o in outs],
        "upstream": [None if u is None else flat(u) for u in upstream],
        "input_grads": [flat(x.grad) for x in xs],
        "param_grads": {} if layer is None else {k: flat(p.grad) for k, p in layer.named_parameters()},
    })


def mha(self_attention=False, **kwargs):
    def call(layer, xs, masks):
        q, k, v = (xs[0], xs[0], xs[0]) if self_attention else xs
        out, weights = layer(q, k, v, **masks, **kwargs)
        return [out, weights]
    return call


def encoder(layer, xs, masks):
    return [layer(xs[0], **masks)]


causal5 = torch.ones(5, 5, dtype=torch.bool).triu(1)  # true: may not attend (MultiheadAttention's sense)
pad_3x5 = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
torch.manual_seed(21)
float_mask_4x5 = torch.randn(4, 5)
float_mask_5x5 = torch.randn(5, 5)
float_mask_4x4x6 = torch.randn(4, 4, 6)
float_mask_2x1x4x6 = torch.randn(2, 1, 4, 6)
bool_mask_4x4x4 = (torch.rand(4, 4, 4) < 0.4).logical_and(~torch.eye(4, dtype=torch.bool))
attend_4x6 = (torch.rand(4, 6) < 0.6)
attend_4x6[:, 0] = True  # every query keeps a key

attention_cases = []
attention_case("mha_self", lambda: nn.MultiheadAttention(8, 2), [[5, 3, 8]], mha(self_attention=True))
attention_case("mha_batch_first_key_padding_per_head", lambda: nn.MultiheadAttention(8, 4, batch_first=True),
               [[3, 4, 8], [3, 6, 8], [3, 6, 8]], mha(average_attn_weights=False),
               {"key_padding_mask": torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] * 5 + [True]])})
attention_case("mha_float_mask_no_weights", lambda: nn.MultiheadAttention(6, 3), [[4, 2, 6], [5, 2, 6], [5, 2, 6]],
               mha(need_weights=False), {"attn_mask": float_mask_4x5})
attention_case("mha_bool_causal_and_padding_batch_first", lambda: nn.MultiheadAttention(8, 2, batch_first=True),
               [[3, 5, 8]], mha(self_attention=True), {"attn_mask": causal5, "key_padding_mask": pad_3x5})
attention_case("mha_bool_mask_3d", lambda: nn.MultiheadAttention(8, 2), [[4, 2, 8]], mha(self_attention=True),
               {"attn_mask": bool_mask_4x4x4})
attention_case("mha_kdim_vdim_float_mask_3d", lambda: nn.MultiheadAttention(8, 2, kdim=5, vdim=3),
               [[4, 2, 8], [6, 2, 5], [6, 2, 3]], mha(), {"attn_mask": float_mask_4x4x6})
attention_case("mha_unbatched_key_padding_per_head", lambda: nn.MultiheadAttention(6, 2),
               [[4, 6], [5, 6], [5, 6]], mha(average_attn_weights=False),
               {"key_padding_mask": torch.tensor([False, False, False, True, True])})
attention_case("mha_nobias", lambda: nn.MultiheadAttention(8, 2, bias=False), [[3, 2, 8]], mha(self_attention=True))
sdpa = lambda **kw: (lambda _, xs, masks: [sdpa_reference(*xs, **masks, **kw)])
attention_case("sdpa", lambda: None, [[2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, 5]], sdpa())
attention_case("sdpa_bool_mask", lambda: None, [[2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, 5]], sdpa(),
               {"attn_mask": attend_4x6})
attention_case("sdpa_float_mask", lambda: None, [[2, 3, 4, 8], [2, 3, 6, 8], [2, 3, 6, 5]], sdpa(),
               {"attn_mask": float_mask_2x1x4x6})
attention_case("sdpa_causal", lambda: None, [[2, 5, 8], [2, 5, 8], [2, 5, 8]], sdpa(is_causal=True))
attention_case("encoder_layer_relu", lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16),
               [[5, 3, 8]], encoder, {"src_key_padding_mask": pad_3x5})
attention_case("encoder_layer_gelu_norm_first_batch_first",
               lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation="gelu", norm_first=True,
                                                  batch_first=True),
               [[3, 5, 8]], encoder, {"src_mask": causal5})
attention_case("encoder_layer_relu_batch_first_float_mask",
               lambda: nn.TransformerEncoderLayer(8, 4, dim_feedforward=12, batch_first=True, layer_norm_eps=1e-4),
               [[3, 5, 8]], encoder, {"src_mask": float_mask_5x5})
attention_case("encoder_layer_gelu_norm_first",
               lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation="gelu", norm_first=True),
               [[5, 3, 8]], encoder)
attention_case("encoder_2_layers_norm",
               lambda: nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, dim_feedforward=16), 2,
                                             norm=nn.LayerNorm(8)),
               [[5, 3, 8]], lambda layer, xs, masks: [layer(xs[0], **masks)],
               {"mask": causal5, "src_key_padding_mask": pad_3x5})
decode = lambda layer, xs, masks: [layer(xs[0], xs[1], **masks)]
attention_case("decoder_layer_relu", lambda: nn.TransformerDecoderLayer(8, 2, dim_feedforward=16),
               [[4, 3, 8], [5, 3, 8]], decode,
               {"tgt_mask": torch.ones(4, 4, dtype=torch.bool).triu(1), "memory_key_padding_mask": pad_3x5})
attention_case("decoder_layer_gelu_norm_first_batch_first",
               lambda: nn.TransformerDecoderLayer(8, 4, dim_feedforward=12, activation="gelu", norm_first=True,
                                                  batch_first=True),
               [[3, 4, 8], [3, 5, 8]], decode,
               {"memory_mask": float_mask_4x5,
                "tgt_key_padding_mask": torch.tensor([[False] * 4, [False] * 3 + [True], [False] * 2 + [True] * 2])})
with open(os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "attention.json"), "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": attention_cases}, f)

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {os.path.normpath(out)}")
