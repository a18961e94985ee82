#!/usr/bin/env python3
"""Writes test/golden/torch/nn_utils.json: torch.nn.utils from PyTorch 1.13 -- pad_sequence,
pack_padded_sequence / pad_packed_sequence / pack_sequence (sorted and unsorted batches, with the
gradient through pack and unpack), LSTM and GRU on packed sequences (outputs, final states and
gradients), parameters_to_vector / vector_to_parameters, weight_norm and spectral_norm (the new
parameters and buffers from a fixed seed, forward outputs, gradients, the power iteration's u and v
after several training-mode forwards, state dict names, and the weight left by their removal).
Tiny shapes, so the tests stay light. Run: /usr/bin/python3 scripts/golden/nn_utils.py"""
import json
import os

import torch
import torch.nn as nn
from torch.nn.utils import rnn as rnn_utils

torch.set_num_threads(1)


def flat(t):
    return t.detach().reshape(-1).double().tolist()


def data(t):
    return {"shape": list(t.shape), "data": flat(t)}


def ints(t):
    return None if t is None else [int(v) for v in t.reshape(-1).tolist()]


rnn = []

# pad_sequence, both layouts, with a padding value
torch.manual_seed(0)
seqs = [torch.randn(3, 2), torch.randn(5, 2), torch.randn(1, 2)]
rnn.append({
    "kind": "pad_sequence", "name": "pad_sequence",
    "sequences": [data(s) for s in seqs],
    "time_first": data(rnn_utils.pad_sequence(seqs)),
    "batch_first": data(rnn_utils.pad_sequence(seqs, batch_first=True, padding_value=-1.5)),
})


def pack_case(name, shape, lengths, batch_first, enforce_sorted, total_length, seed):
    torch.manual_seed(seed)
    x = torch.randn(*shape, requires_grad=True)
    packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    padded, out_lengths = rnn_utils.pad_packed_sequence(
        packed, batch_first=batch_first, padding_value=0.25, total_length=total_length)
    w = torch.randn(*padded.shape)
    (padded * w).sum().backward()
    rnn.append({
        "kind": "pack", "name": name, "lengths": lengths, "batch_first": batch_first,
        "enforce_sorted": enforce_sorted, "total_length": total_length,
        "input": data(x), "data": data(packed.data), "batch_sizes": ints(packed.batch_sizes),
        "sorted_indices": ints(packed.sorted_indices), "unsorted_indices": ints(packed.unsorted_indices),
        "padded": data(padded), "out_lengths": ints(out_lengths),
        "upstream": flat(w), "input_grad": flat(x.grad),
    })


pack_case("pack_sorted_time_first", [5, 3, 2], [5, 3, 2], False, True, None, 1)
pack_case("pack_unsorted_batch_first_ties_total_length", [4, 5, 2], [2, 5, 3, 5], True, False, 7, 2)

# pack_sequence of unsorted sequences
torch.manual_seed(3)
seqs = [torch.randn(2, 3), torch.randn(4, 3), torch.randn(3, 3)]
packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
rnn.append({
    "kind": "pack_sequence", "name": "pack_sequence_unsorted",
    "sequences": [data(s) for s in seqs], "data": data(packed.data),
    "batch_sizes": ints(packed.batch_sizes), "sorted_indices": ints(packed.sorted_indices),
    "unsorted_indices": ints(packed.unsorted_indices),
})


def packed_rnn_case(name, make, shape, lengths, batch_first, enforce_sorted, with_state, seed):
    torch.manual_seed(seed)
    layer = make()
    torch.manual_seed(seed + 1)
    x = torch.randn(*shape, requires_grad=True)
    lstm = isinstance(layer, nn.LSTM)
    d = 2 if layer.bidirectional else 1
    batch = shape[0] if batch_first else shape[1]
    state_shape = [layer.num_layers * d, batch, layer.hidden_size]
    states = []
    if with_state:
        states = [torch.randn(*state_shape, requires_grad=True) for _ in range(2 if lstm else 1)]
    packed = rnn_utils.pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    state = None if not states else (tuple(states) if lstm else states[0])
    out, final = layer(packed, state) if state is not None else layer(packed)
    finals = list(final) if lstm else [final]
    upstream = [torch.randn(*out.data.shape)] + [torch.randn(*f.shape) for f in finals]
    total = (out.data * upstream[0]).sum() + sum((f * u).sum() for f, u in zip(finals, upstream[1:]))
    total.backward()
    rnn.append({
        "kind": "packed_rnn", "name": name, "lengths": lengths, "batch_first": batch_first,
        "enforce_sorted": enforce_sorted, "seed": seed,
        "params": {k: data(v) for k, v in layer.state_dict().items()},
        "input": data(x), "state": [data(s) for s in states],
        "output": data(out.data), "batch_sizes": ints(out.batch_sizes),
        "sorted_indices": ints(out.sorted_indices), "unsorted_indices": ints(out.unsorted_indices),
        "finals": [data(f) for f in finals],
        "upstream": [flat(u) for u in upstream],
        "input_grad": flat(x.grad), "state_grads": [flat(s.grad) for s in states],
        "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
    })


packed_rnn_case("lstm_packed_unsorted_bidirectional_2layer_state",
                lambda: nn.LSTM(3, 4, num_layers=2, bidirectional=True), [5, 4, 3], [3, 5, 1, 4],
                False, False, True, 10)
packed_rnn_case("gru_packed_sorted_batch_first",
                lambda: nn.GRU(3, 2), [3, 4, 3], [4, 2, 2], True, True, False, 20)
packed_rnn_case("lstm_packed_unsorted_batch_first",
                lambda: nn.LSTM(2, 3, batch_first=True), [3, 4, 2], [2, 4, 3], True, False, False, 30)

# parameters_to_vector / vector_to_parameters
torch.manual_seed(40)
lin = nn.Linear(3, 2)
vec = torch.nn.utils.parameters_to_vector(lin.parameters())
vector = {"params": {k: data(v) for k, v in lin.state_dict().items()}, "vector": flat(vec)}

norms = []


def norm_case(name, make, apply, input_shape, seed, forwards=1, remove=None):
    torch.manual_seed(seed)
    layer = make()
    initial = {k: data(v) for k, v in layer.state_dict().items()}
    apply(layer)
    after_apply = {k: data(v) for k, v in layer.state_dict().items()}
    names = list(layer.state_dict().keys())
    param_names = [k for k, _ in layer.named_parameters()]
    torch.manual_seed(seed + 1)
    xs = [torch.randn(*input_shape) for _ in range(forwards)]
    outs = [layer(x) for x in xs]
    y = outs[-1]
    w = torch.randn(*y.shape)
    (y * w).sum().backward()
    layer.eval()
    x_eval = torch.randn(*input_shape)
    with torch.no_grad():
        y_eval = layer(x_eval)
    case = {
        "name": name, "seed": seed, "initial": initial, "after_apply": after_apply,
        "state_dict_names": names, "parameter_names": param_names,
        "inputs": [data(x) for x in xs], "outputs": [data(o) for o in outs], "upstream": flat(w),
        "grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
        "state_after": {k: data(v) for k, v in layer.state_dict().items()},
        "eval_input": data(x_eval), "eval_output": data(y_eval),
    }
    if remove is not None:
        remove(layer)
        case["removed_names"] = list(layer.state_dict().keys())
        case["removed_weight"] = data(layer.weight)
    norms.append(case)


wn = torch.nn.utils.weight_norm
sn = torch.nn.utils.spectral_norm
norm_case("weight_norm_linear", lambda: nn.Linear(4, 3), lambda m: wn(m), [2, 4], 50,
          remove=torch.nn.utils.remove_weight_norm)
norm_case("weight_norm_conv2d_dim1", lambda: nn.Conv2d(2, 3, 2), lambda m: wn(m, dim=1), [1, 2, 3, 3], 51)
norm_case("weight_norm_linear_whole", lambda: nn.Linear(3, 2), lambda m: wn(m, dim=None), [2, 3], 52)
norm_case("spectral_norm_linear_3_forwards_2_iterations", lambda: nn.Linear(5, 4),
          lambda m: sn(m, n_power_iterations=2), [3, 5], 60, forwards=3,
          remove=torch.nn.utils.remove_spectral_norm)
norm_case("spectral_norm_conv_transpose2d_default_dim", lambda: nn.ConvTranspose2d(2, 3, 2),
          lambda m: sn(m, eps=1e-6), [1, 2, 2, 2], 61, forwards=2)
norm_case("spectral_norm_conv2d_dim1", lambda: nn.Conv2d(3, 2, 2), lambda m: sn(m, dim=1), [1, 3, 3, 3], 62,
          forwards=2)

out = os.path.join(os.path.dirname(__file__), "..", "..", "test", "golden", "torch", "nn_utils.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "rnn": rnn, "vector": vector, "norms": norms}, f)
