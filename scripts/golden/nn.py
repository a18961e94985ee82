"""Writes test/golden/torch/nn.json (and rnn.json for LSTM and GRU): for each nn layer and loss, PyTorch 1.13's parameters
(initialised from a fixed seed), input, output and gradients. Run: python3 scripts/golden/nn.py
The TypeScript tests rebuild every case with the same seed and compare (max abs error 1e-5)."""
import json
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

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {os.path.normpath(out)}")
