# Generates test/golden/torch/pth/: small files written by torch.save (PyTorch 1.13, CPU) in the
# zip format (the default since 1.6) and the legacy format (_use_new_zipfile_serialization=False),
# and expected.json with every tensor's dtype, shape and values (floats as their exact decimal
# repr; int64 as strings so that JSON keeps every digit), the non-tensor values (ints beyond 2^53
# as {'int': digits}, bytes as {'bytes': hex}), and a small model's input and outputs. Run: /usr/bin/python3 scripts/golden/pytorch_files.py
import argparse, collections, io, json, os, pickle, zipfile
import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, '..', '..', 'test', 'golden', 'torch', 'pth')
os.makedirs(out, exist_ok=True)
torch.manual_seed(7)


def save(obj, name, legacy=False, protocol=2):
    torch.save(obj, os.path.join(out, name), _use_new_zipfile_serialization=not legacy,
               pickle_protocol=protocol)


def big_endian_copy(name, copy):
    # PyTorch 1.13 writes only little-endian archives (it has no byteorder entry); the copy is
    # the archive a big-endian machine writes: byteorder 'big' and every element byte-swapped.
    sizes = {}

    class Storages(pickle.Unpickler):
        def find_class(self, module, name):
            if module == 'collections':
                return collections.OrderedDict
            return name if name.endswith('Storage') else (lambda *args, **kwargs: None)

        def persistent_load(self, pid):
            sizes[pid[2]] = getattr(torch, pid[1])().element_size()
            return None

    src = zipfile.ZipFile(os.path.join(out, name))
    folder = src.namelist()[0].split('/')[0]
    Storages(io.BytesIO(src.read(f'{folder}/data.pkl'))).load()
    with zipfile.ZipFile(os.path.join(out, copy), 'w', zipfile.ZIP_STORED) as dst:
        for entry in src.namelist():
            data = src.read(entry)
            key = entry[len(f'{folder}/data/'):]
            if entry.startswith(f'{folder}/data/') and sizes[key] > 1:
                data = np.frombuffer(data, dtype=np.uint8).reshape(-1, sizes[key])[:, ::-1].tobytes()
            dst.writestr(entry.replace(folder, copy.split('.')[0], 1), data)
        dst.writestr(f"{copy.split('.')[0]}/byteorder", 'big')


def describe(t):
    flat = t.detach().contiguous().reshape(-1)
    if t.dtype in (torch.float16, torch.bfloat16):
        values = [float(v) for v in flat.float().tolist()]
    elif t.dtype == torch.int64:
        values = [str(v) for v in flat.tolist()]
    elif t.dtype == torch.bool:
        values = [bool(v) for v in flat.tolist()]
    else:
        values = flat.tolist()
    # JSON has no infinities: they are written as strings
    values = [v if not isinstance(v, float) or np.isfinite(v) else str(v) for v in values]
    return {'dtype': str(t.dtype).replace('torch.', ''), 'shape': list(t.shape), 'values': values}


def flatten(obj, prefix, tensors, values):
    if isinstance(obj, torch.Tensor):
        tensors[prefix] = describe(obj)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            flatten(v, f'{prefix}.{k}' if prefix else str(k), tensors, values)
    elif isinstance(obj, (list, tuple)):
        for k, v in enumerate(obj):
            flatten(v, f'{prefix}.{k}' if prefix else str(k), tensors, values)
    elif isinstance(obj, (set, frozenset)):
        flatten(list(obj), prefix, tensors, values)
    elif isinstance(obj, np.generic):
        values[prefix] = obj.item()
    elif isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) > 2**53:
        values[prefix] = {'int': str(obj)}
    elif isinstance(obj, bytes):
        values[prefix] = {'bytes': obj.hex()}
    elif isinstance(obj, torch.device):
        values[prefix] = str(obj)
    else:
        values[prefix] = obj


expected = {}


def record(name, obj):
    tensors, values = {}, {}
    flatten(obj, '', tensors, values)
    expected[name] = {'tensors': tensors, 'values': values}


# A small model's state dict, both formats, and its outputs on a fixed input.
model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))
x = torch.linspace(-1, 1, 8).reshape(2, 4)
with torch.no_grad():
    y = model(x)
state = model.state_dict()
save(state, 'sequential.pth')
save(state, 'sequential-legacy.pth', legacy=True)
record('sequential.pth', state)
record('sequential-legacy.pth', state)
save(state, 'sequential-protocol4.pth', protocol=4)
record('sequential-protocol4.pth', state)
model_io = {'input': describe(x), 'output': describe(y)}

# A training checkpoint: a nested state dict, an int epoch, a float, a numpy float, a string,
# None, a bool, a list and the optimizer's state (int keys).
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model(x).sum().backward()
opt.step()
checkpoint = {
    'state_dict': model.state_dict(),
    'epoch': 3,
    'best_acc': 0.8125,
    'best_acc_np': np.float64(0.75),
    'arch': 'mlp',
    'scheduler': None,
    'finished': False,
    'milestones': [2, 4],
    'big': 2**40,
    'huge': -(2**70) + 5,
    'device': torch.device('cuda', 1),
    'tag': b'\x00\xffab',
    'nothing': b'',
    'classes': {3, 1},
    'size': torch.Size([2, 3]),
    'optimizer': opt.state_dict(),
}
save(checkpoint, 'checkpoint.pth')
save(checkpoint, 'checkpoint-legacy.pth', legacy=True)
record('checkpoint.pth', checkpoint)
record('checkpoint-legacy.pth', checkpoint)

# Every dtype the reader supports.
base = torch.tensor([[-2.5, -1.0, 0.0], [0.5, 1.25, 3.0]])
dtypes = collections.OrderedDict()
for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
           torch.int16, torch.int8, torch.uint8, torch.bool]:
    name = str(dt).replace('torch.', '')
    dtypes[name] = base.abs().to(dt) if dt == torch.uint8 else base.to(dt)
dtypes['int64_big'] = torch.tensor([2**62 + 1, -(2**62) - 3, 0])
dtypes['float_specials'] = torch.tensor([float('inf'), float('-inf'), 1e-40, -0.0])
save(dtypes, 'dtypes.pth')
save(dtypes, 'dtypes-legacy.pth', legacy=True)
record('dtypes.pth', dtypes)
record('dtypes-legacy.pth', dtypes)
big_endian_copy('dtypes.pth', 'dtypes-big.pth')
record('dtypes-big.pth', dtypes)

# Views: a transposed tensor saved as is, two views of one storage (one with an offset), a
# strided slice, an expanded (stride 0) tensor, a 0-d tensor and an empty tensor.
m = torch.arange(12, dtype=torch.float32).reshape(3, 4)
views = {
    'transposed': m.t(),
    'whole': m,
    'row1': m[1],
    'column2': m[:, 2],
    'every_other': m[::2, 1::2],
    'expanded': torch.tensor([1.5, -2.0]).expand(3, 2),
    'scalar': torch.tensor(4.25),
    'empty': torch.zeros(0, 3),
}
assert views['transposed'].storage().data_ptr() == views['whole'].storage().data_ptr()
save(views, 'views.pth')
save(views, 'views-legacy.pth', legacy=True)
record('views.pth', views)
record('views-legacy.pth', views)
big_endian_copy('views.pth', 'views-big.pth')
record('views-big.pth', views)

# Parameters (torch._utils._rebuild_parameter) in a plain dict.
params = {'weight': torch.nn.Parameter(torch.tensor([1.0, 2.0])), 'plain': torch.tensor([3])}
save(params, 'parameters.pth')
record('parameters.pth', params)

# Forbidden: a whole nn.Module (its class is a global the reader must refuse) and a reference to
# os.system (a custom class whose __reduce__ names it; never called by the reader).
save(model, 'module.pth')


class Exploit:
    def __reduce__(self):
        return (os.system, ('echo pwned',))


save({'weight': torch.zeros(1), 'x': Exploit()}, 'os-system.pth')



# A trainer's checkpoint with objects of other classes (a config object, argparse's Namespace):
# refused by default, skipped with skipObjects (the expected values leave them out).
class Config:
    def __init__(self):
        self.name = 'sade'
        self.weights = torch.ones(2)


trainer = {'state_dict': state, 'args': argparse.Namespace(lr=0.1, epochs=3), 'config': Config(),
           'epoch': 7}
save(trainer, 'objects.pth')
record('objects.pth', {k: v for k, v in trainer.items() if k in ('state_dict', 'epoch')})

with open(os.path.join(out, 'expected.json'), 'w') as f:
    json.dump({'torch': torch.__version__, 'files': expected, 'model': model_io}, f, indent=1, sort_keys=True)
    f.write('\n')
print(out)
