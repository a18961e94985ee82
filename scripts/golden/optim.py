#!/usr/bin/env python3
"""Golden data for tailor's optimizers, LR schedulers and safetensors I/O, from PyTorch 1.13.

Run with Debian's python3-torch:  /usr/bin/python3 scripts/golden/optim.py
Writes test/golden/torch/optim.json, test/golden/torch/lr_scheduler.json and
test/golden/torch/python_written.safetensors (a file written by a hand-written safetensors
writer, independent of tailor, which the TypeScript tests read back).

  /usr/bin/python3 scripts/golden/optim.py --check FILE.safetensors
reads a safetensors file (for example one tailor wrote) with a hand-written reader that follows
the format spec, checks it strictly and prints each tensor's name, dtype, shape and a checksum.
"""
import json
import math
import os
import struct
import sys

import numpy as np
import torch

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..'))
OUT = os.path.join(ROOT, 'test', 'golden', 'torch')


def values(t):
    return [float(v) for v in t.detach().double().reshape(-1).tolist()]


def make_problem(seed, shapes, steps):
    g = torch.Generator().manual_seed(seed)
    params = [torch.randn(s, generator=g) for s in shapes]
    grads = [[torch.randn(s, generator=g) for s in shapes] for _ in range(steps)]
    return params, grads


def run_case(name, make_optimizer, groups_lr=None, steps=5, seed=0, skip=None):
    """groups_lr: per-group lr overrides ([3, 4] params form group 0, [5] group 1)."""
    shapes = [[3, 4], [5]]
    init, grads = make_problem(seed, shapes, steps)
    params = [p.clone().requires_grad_(True) for p in init]
    if groups_lr is None:
        opt = make_optimizer(params)
    else:
        opt = make_optimizer([{'params': [params[0]], 'lr': groups_lr[0]}, {'params': [params[1]]}])
    history = []
    for step in range(steps):
        for i, p in enumerate(params):
            # skip = (step, index): that parameter has no gradient at that step (PyTorch skips it).
            p.grad = None if skip == (step, i) else grads[step][i].clone()
        opt.step()
        history.append([values(p) for p in params])
    state = {}
    for i, p in enumerate(params):
        s = opt.state[p]
        state[str(i)] = {k: (values(v) if v.dim() > 0 else float(v)) if torch.is_tensor(v) else v for k, v in s.items()}
    return {
        'name': name,
        'shapes': shapes,
        'init': [values(p) for p in init],
        'grads': [[values(g) for g in step] for step in grads],
        'skip': list(skip) if skip else None,
        'history': history,
        'state': state,
    }


def optim_cases():
    SGD, Adam, AdamW, RMSprop = torch.optim.SGD, torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop
    cases = [
        ('sgd_plain', {'type': 'SGD', 'lr': 0.5}, lambda p: SGD(p, lr=0.5), None),
        ('sgd_cifar_recipe', {'type': 'SGD', 'lr': 0.1, 'momentum': 0.9, 'nesterov': True, 'weightDecay': 5e-4},
         lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=5e-4), None),
        ('sgd_momentum_dampening_wd', {'type': 'SGD', 'lr': 0.05, 'momentum': 0.8, 'dampening': 0.3, 'weightDecay': 1e-2},
         lambda p: SGD(p, lr=0.05, momentum=0.8, dampening=0.3, weight_decay=1e-2), None),
        ('sgd_maximize_groups', {'type': 'SGD', 'lr': 0.01, 'momentum': 0.9, 'maximize': True, 'groupLr': [0.2, None]},
         lambda p: SGD(p, lr=0.01, momentum=0.9, maximize=True), [0.2, None]),
        ('sgd_skipped_grad', {'type': 'SGD', 'lr': 0.1, 'momentum': 0.9, 'nesterov': True, 'skip': [1, 0]},
         lambda p: SGD(p, lr=0.1, momentum=0.9, nesterov=True), None),
        ('adamw_default', {'type': 'AdamW'}, lambda p: AdamW(p), None),
        ('adamw_custom', {'type': 'AdamW', 'lr': 0.01, 'betas': [0.8, 0.99], 'eps': 1e-6, 'weightDecay': 0.1},
         lambda p: AdamW(p, lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1), None),
        ('adamw_amsgrad_groups', {'type': 'AdamW', 'lr': 0.02, 'amsgrad': True, 'groupLr': [0.005, None]},
         lambda p: AdamW(p, lr=0.02, amsgrad=True), [0.005, None]),
        ('adamw_maximize', {'type': 'AdamW', 'lr': 0.01, 'maximize': True, 'weightDecay': 0.05},
         lambda p: AdamW(p, lr=0.01, maximize=True, weight_decay=0.05), None),
        ('adam_default', {'type': 'Adam'}, lambda p: Adam(p), None),
        ('adam_l2_custom', {'type': 'Adam', 'lr': 0.01, 'betas': [0.8, 0.99], 'eps': 1e-6, 'weightDecay': 0.1},
         lambda p: Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1), None),
        ('adam_amsgrad_maximize_groups', {'type': 'Adam', 'lr': 0.02, 'amsgrad': True, 'maximize': True,
                                          'weightDecay': 0.05, 'groupLr': [0.005, None]},
         lambda p: Adam(p, lr=0.02, amsgrad=True, maximize=True, weight_decay=0.05), [0.005, None]),
        ('adam_skipped_grad', {'type': 'Adam', 'lr': 0.05, 'skip': [2, 1]}, lambda p: Adam(p, lr=0.05), None),
        ('rmsprop_default', {'type': 'RMSprop'}, lambda p: RMSprop(p), None),
        ('rmsprop_momentum_centered_wd', {'type': 'RMSprop', 'lr': 0.005, 'alpha': 0.9, 'momentum': 0.8,
                                          'centered': True, 'weightDecay': 0.01, 'eps': 1e-6},
         lambda p: RMSprop(p, lr=0.005, alpha=0.9, momentum=0.8, centered=True, weight_decay=0.01, eps=1e-6), None),
        ('rmsprop_maximize_groups', {'type': 'RMSprop', 'lr': 0.01, 'maximize': True, 'momentum': 0.5,
                                     'groupLr': [0.002, None]},
         lambda p: RMSprop(p, lr=0.01, maximize=True, momentum=0.5), [0.002, None]),
    ]
    out = []
    for seed, (name, options, make, groups_lr) in enumerate(cases):
        skip = tuple(options['skip']) if 'skip' in options else None
        case = run_case(name, make, groups_lr=groups_lr, steps=6, seed=seed, skip=skip)
        case['options'] = options
        out.append(case)
    return out


def clip_cases():
    """torch.nn.utils.clip_grad_norm_ / clip_grad_value_ on three gradients (one parameter has none)."""
    g = torch.Generator().manual_seed(11)
    shapes = [[3, 4], [5], [2, 2]]
    grads = [torch.randn(s, generator=g) * 3 for s in shapes]
    out = []
    for max_norm, norm_type in [(1.0, 2.0), (100.0, 2.0), (0.5, 1.0), (2.0, 3.0), (0.25, float('inf')), (0.0, 2.0)]:
        params = [torch.zeros(s, requires_grad=True) for s in shapes] + [torch.zeros(2, requires_grad=True)]
        for p, gr in zip(params, grads):
            p.grad = gr.clone()
        total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
        out.append({'kind': 'norm', 'maxNorm': max_norm, 'normType': 'inf' if norm_type == float('inf') else norm_type,
                    'total': float(total), 'grads': [values(p.grad) for p in params[:3]]})
    for clip_value in [0.5, 2.0]:
        params = [torch.zeros(s, requires_grad=True) for s in shapes]
        for p, gr in zip(params, grads):
            p.grad = gr.clone()
        torch.nn.utils.clip_grad_value_(params, clip_value)
        out.append({'kind': 'value', 'clipValue': clip_value, 'grads': [values(p.grad) for p in params]})
    return {'shapes': shapes, 'grads': [values(x) for x in grads], 'cases': out}


def scheduler_cases():
    def lrs_of(make, epochs, base=(0.1, 0.01)):
        params = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
        opt = torch.optim.SGD([{'params': [params[0]], 'lr': base[0]}, {'params': [params[1]], 'lr': base[1]}], lr=base[0])
        sched = make(opt)
        lrs = []
        for _ in range(epochs):
            lrs.append([g['lr'] for g in opt.param_groups])
            opt.step()
            sched.step()
        return lrs

    # The SADE / BalPoE CustomLR lambda, verbatim in behaviour (utils/util.py).
    def custom_lambda(step1, step2, gamma, warmup_epoch):
        def lr_lambda(epoch):
            if epoch >= step2:
                lr = gamma * gamma
            elif epoch >= step1:
                lr = gamma
            else:
                lr = 1
            if epoch < warmup_epoch:
                lr = lr * float(1 + epoch) / warmup_epoch
            return lr
        return lr_lambda

    def one_cycle(make, steps, optimizer='sgd'):
        params = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
        groups = [{'params': [params[0]], 'lr': 0.1}, {'params': [params[1]], 'lr': 0.01}]
        opt = (torch.optim.SGD(groups, lr=0.1, momentum=0.9) if optimizer == 'sgd'
               else torch.optim.AdamW(groups, lr=0.1))
        sched = make(opt)
        lrs, momenta = [], []
        for _ in range(steps):
            lrs.append([g['lr'] for g in opt.param_groups])
            momenta.append([g['momentum'] if optimizer == 'sgd' else g['betas'][0] for g in opt.param_groups])
            opt.step()
            sched.step()
        return {'lrs': lrs, 'momenta': momenta}

    def plateau(make, metrics):
        params = [torch.zeros(1, requires_grad=True), torch.zeros(1, requires_grad=True)]
        opt = torch.optim.SGD([{'params': [params[0]], 'lr': 0.1}, {'params': [params[1]], 'lr': 0.01}], lr=0.1)
        sched = make(opt)
        lrs = []
        for m in metrics:
            opt.step()
            sched.step(m)
            lrs.append([g['lr'] for g in opt.param_groups])
        return {'metrics': metrics, 'lrs': lrs}

    losses = [1.0, 0.9, 0.95, 0.91, 0.92, 0.9, 0.89999, 0.93, 0.94, 0.8, 0.85, 0.86, 0.87, 0.88, 0.7, 0.71, 0.72,
              0.73, 0.74, 0.75, 0.76, 0.77, 0.78, 0.79, 0.8]
    S = torch.optim.lr_scheduler
    return {
        'exponential': lrs_of(lambda o: S.ExponentialLR(o, gamma=0.95), 60),
        'linear': lrs_of(lambda o: S.LinearLR(o, start_factor=0.25, end_factor=1.0, total_iters=8), 20),
        'linear_decay': lrs_of(lambda o: S.LinearLR(o, start_factor=1.0, end_factor=0.1, total_iters=10), 20),
        'one_cycle': one_cycle(lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.05], total_steps=50), 50),
        'one_cycle_linear_three_phase_adamw': one_cycle(
            lambda o: S.OneCycleLR(o, max_lr=0.3, epochs=4, steps_per_epoch=10, pct_start=0.25,
                                   anneal_strategy='linear', three_phase=True, div_factor=10,
                                   final_div_factor=100), 40, optimizer='adamw'),
        'plateau': plateau(lambda o: S.ReduceLROnPlateau(o, patience=2, factor=0.5, cooldown=1,
                                                         min_lr=[0.02, 0.0]), losses),
        'plateau_max_abs': plateau(lambda o: S.ReduceLROnPlateau(o, mode='max', threshold=0.01, threshold_mode='abs',
                                                                 patience=1), [-l for l in losses]),
        'base': [0.1, 0.01],
        'custom_lr': lrs_of(lambda o: S.LambdaLR(o, custom_lambda(160, 180, 0.1, 5)), 200),
        'multistep': lrs_of(lambda o: S.MultiStepLR(o, milestones=[160, 180], gamma=0.1), 200),
        'step': lrs_of(lambda o: S.StepLR(o, step_size=30, gamma=0.5), 100),
        'cosine': lrs_of(lambda o: S.CosineAnnealingLR(o, T_max=180, eta_min=0.0), 200),
        'cosine_eta': lrs_of(lambda o: S.CosineAnnealingLR(o, T_max=50, eta_min=1e-4), 120),
    }


# ---- safetensors, written and read by hand from the spec (no safetensors package needed) ----
DTYPES = {'F64': np.float64, 'F32': np.float32, 'F16': np.float16, 'I64': np.int64, 'I32': np.int32, 'I16': np.int16,
          'I8': np.int8, 'U8': np.uint8, 'BOOL': np.bool_, 'BF16': np.uint16}  # BF16: raw bits, numpy has no bfloat16


def write_safetensors(path, tensors, metadata):
    header = {'__metadata__': metadata}
    blobs = []
    offset = 0
    # The reference library's order (and tailor's): its Dtype enum descending, then by name.
    order = sorted(tensors.items(), key=lambda kv: (-DTYPE_RANK[kv[1][0]], kv[0]))
    for name, (dtype, array) in order:
        data = np.ascontiguousarray(array, dtype=DTYPES[dtype]).astype(np.dtype(DTYPES[dtype]).newbyteorder('<')).tobytes()
        header[name] = {'dtype': dtype, 'shape': list(array.shape), 'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(',', ':')).encode('utf-8')
    text += b' ' * ((8 - len(text) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


DTYPES_BY_NAME = {}
# Position in safetensors' Dtype enum (BOOL, U8, I8, F8_E5M2, F8_E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64).
DTYPE_RANK = {'BOOL': 0, 'U8': 1, 'I8': 2, 'I16': 5, 'F16': 7, 'BF16': 8, 'I32': 9, 'F32': 11, 'F64': 12, 'I64': 13}


def read_safetensors(path):
    with open(path, 'rb') as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f'{path}: shorter than the 8-byte header length')
    (n,) = struct.unpack('<Q', raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f'{path}: header length {n} runs past the end of the file')
    header = json.loads(raw[8:8 + n].decode('utf-8'))
    if not raw[8:8 + n].decode('utf-8').startswith('{'):
        raise ValueError(f'{path}: header does not start with {{')
    body = raw[8 + n:]
    metadata = header.pop('__metadata__', None)
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise ValueError(f'{path}: __metadata__ must map strings to strings')
    out = {}
    spans = []
    for name, info in header.items():
        dtype = DTYPES[info['dtype']]
        begin, end = info['data_offsets']
        count = int(np.prod(info['shape'])) if info['shape'] else 1
        if end - begin != count * np.dtype(dtype).itemsize:
            raise ValueError(f'{path}: {name}: data_offsets size {end - begin} does not match shape {info["shape"]}')
        spans.append((begin, end))
        DTYPES_BY_NAME[name] = info['dtype']
        out[name] = np.frombuffer(body[begin:end], dtype=np.dtype(dtype).newbyteorder('<')).reshape(info['shape'])
    spans.sort()
    pos = 0
    for begin, end in spans:
        if begin != pos:
            raise ValueError(f'{path}: the data buffer has a hole or overlap at byte {begin}')
        pos = end
    if pos != len(body):
        raise ValueError(f'{path}: {len(body) - pos} bytes after the last tensor')
    return out, metadata


def check(path):
    tensors, metadata = read_safetensors(path)
    print('metadata', json.dumps(metadata, sort_keys=True))
    for name in sorted(tensors):
        a = tensors[name]
        a = a.astype(a.dtype.newbyteorder('='))
        if DTYPES_BY_NAME.get(name) == 'BF16':
            t = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
        else:
            t = torch.from_numpy(a.copy())
        print(name, str(t.dtype), list(a.shape), 'sum=%.9g' % float(t.double().sum()), 'first=%s' % (t.reshape(-1)[:3].tolist(),))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--check':
        check(sys.argv[2])
        return
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, 'optim.json'), 'w') as f:
        json.dump({'torch': torch.__version__, 'cases': optim_cases(), 'clip': clip_cases()}, f)
    with open(os.path.join(OUT, 'lr_scheduler.json'), 'w') as f:
        json.dump({'torch': torch.__version__, **scheduler_cases()}, f)
    g = torch.Generator().manual_seed(7)
    weight = torch.randn(4, 3, generator=g)
    tensors = {
        'layer.weight': ('F32', weight.numpy()),
        'layer.bias': ('F64', np.array([0.5, -1.25, 3.0])),
        'counts': ('I64', np.array([[1, -2], [2**40, 7]], dtype=np.int64)),
        'labels': ('I32', np.array([3, 1, 4, 1, 5], dtype=np.int32)),
        'mask': ('BOOL', np.array([True, False, True])),
        'scalar': ('F32', np.array(2.5, dtype=np.float32)),
        'empty': ('F32', np.zeros((0, 3), dtype=np.float32)),
    }
    write_safetensors(os.path.join(OUT, 'python_written.safetensors'), tensors, {'format': 'pt', 'epoch': '12'})
    with open(os.path.join(OUT, 'python_written.json'), 'w') as f:
        json.dump({name: {'dtype': d, 'shape': list(a.shape), 'values': [float(v) for v in np.asarray(a).reshape(-1)]}
                   for name, (d, a) in tensors.items()}, f)
    print('wrote', OUT)


if __name__ == '__main__':
    main()
