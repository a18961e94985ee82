// Hostile arguments to the tensor API from JavaScript (the API fuzz targets found them): each must
// end in a named error, never a crash or a leak. The files and the command line are in
// hostile.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';

test('tensor API: hostile arguments from JavaScript end in named errors (the API fuzz targets found them)', async () => {
  const torch = await import('../../src/torch/index.js');
  const { ArgumentError } = await import('../../src/util/arguments.js');
  const live = torch.liveTensors();
  const x = torch.randn([2, 3]);
  const param = torch.randn([2]).requiresGrad_();
  const sgd = new torch.optim.SGD([param], { lr: 0.1 });
  const linear = new torch.nn.Linear(3, 2);
  const encoder = new torch.nn.TransformerEncoderLayer(4, 2);
  const cyclic: unknown[] = [];
  cyclic.push(cyclic);
  // converting it to a string (as a property key, or in `dim + 1`) overflows the stack
  let deep: unknown = [1];
  for (let k = 0; k < 100_000; k++) deep = [deep];
  const self: Record<string, unknown> = {};
  self.self = self;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const any = (v: unknown): any => v;
  const cases: [string, () => unknown, RegExp][] = [
    [
      'a missing Tensor',
      () => x.matmul(any(undefined)),
      /^aten::matmul: argument 'other' must be a Tensor, got undefined/,
    ],
    [
      'a string for Tensor[]',
      () => torch.cat(any('abc')),
      /^aten::cat: argument 'tensors' must be an array of Tensors/,
    ],
    [
      'a Tensor for a Scalar',
      () => torch.full([2], any(x)),
      /^aten::full: argument '\w+' must be a number or a boolean/,
    ],
    [
      'a string for an int',
      () => torch.linspace(0, 1, any('a')),
      /^aten::linspace: argument 'steps' must be a number/,
    ],
    [
      'an array for a thread count',
      () => torch.setNumThreads(any([1])),
      /^setNumThreads: n must be an integer/,
    ],
    ['a string for a seed', () => torch.manualSeed(any('x')), /^manualSeed: seed must be an integer/],
    [
      'an array for a generator state',
      () => torch.setRngState(any([1, 2])),
      /^setRngState: state must be a Uint8Array/,
    ],
    [
      'a cyclic array for data',
      () => torch.tensor(any(cyclic)),
      /^tensor: data is nested deeper than 64 levels/,
    ],
    ['an unknown dtype', () => torch.zeros([2], any('x')), /unknown dtype 'x'/],
    ['an unknown memory format', () => x.isContiguousIn(any(0)), /unknown memory format 0/],
    ['an array for a device', () => x.to(any([[1]])), /invalid device an array of 1/],
    [
      'a Tensor for outputs',
      () => torch.autograd.grad(any(x), [x]),
      /^autograd\.grad: outputs must be an array/,
    ],
    ['a string for inputs', () => torch.gradcheck((t) => t, any('x')), /^gradcheck: inputs must be an array/],
    [
      'a deep array for a dim',
      () => x.size(any(deep)),
      /^Tensor\.size: dim must be an integer, got an array of 1/,
    ],
    ['a deep array for a dtype', () => torch.randn([2], any(deep)), /unknown dtype an array of 1/],
    [
      'null svdvals options',
      () => torch.linalg.svdvals(x, any(null)),
      /^linalg\.svdvals: options must be an object/,
    ],
    [
      'a degree of 2^53',
      () => torch.special.legendrePolynomialP(x, 2 ** 53),
      /^special\.legendrePolynomialP: n must be a degree of at most 100000/,
    ],
    ['null options', () => torch.linalg.pinv(x, any(null)), /^linalg\.pinv: options must be an object/],
    [
      'no options',
      () => torch.tidy(() => torch.nn.functional.interpolate(torch.zeros([1, 1, 4]), any(undefined))),
      /^interpolate: options must be an object/,
    ],
    [
      'a number for bytes',
      () => torch.decodeSafetensors(any(2)),
      /^decodeSafetensors: bytes must be a Uint8Array/,
    ],
    [
      'a number in metadata',
      () => torch.encodeSafetensors({ x }, any({ k: 1 })),
      /^encodeSafetensors: metadata 'k' must be a string/,
    ],
    [
      'a cyclic batch',
      () => torch.data.defaultCollate([self, self]),
      /^defaultCollate: items\[0\] is nested deeper than 64/,
    ],
    [
      'an array for an epoch',
      () => new torch.data.RandomSampler(3).indices(any([[1]])),
      /^Sampler\.indices: epoch must be an integer/,
    ],
    [
      'no sampler weights',
      () => new torch.data.WeightedRandomSampler(any(null), 2),
      /^WeightedRandomSampler: weights must be an array/,
    ],
    [
      'a number for an icdf value',
      () => new torch.distributions.Normal(0, 1).icdf(any(0)),
      /Normal\.icdf: the value argument must be a Tensor/,
    ],
    [
      'null optimizer options',
      () => new torch.optim.SGD([param], any(null)),
      /^SGD: options must be an object, got null/,
    ],
    [
      'cyclic betas',
      () => new torch.optim.Adam([param], any({ betas: cyclic })),
      /^RangeError: Adam: invalid betas an array of 1/,
    ],
    [
      'milestones of a number',
      () => new torch.optim.MultiStepLR(sgd, any({ milestones: 5 })),
      /^MultiStepLR: options\.milestones must be an array/,
    ],
    [
      'a number for a factor',
      () => new torch.optim.LambdaLR(sgd, any(5)),
      /^LambdaLR: factor\[0\] must be a function/,
    ],
    [
      'an object for an input',
      () => new torch.nn.InstanceNorm1d(3).forward(any({})),
      /^InstanceNorm1d: input must be a Tensor/,
    ],
    [
      'a number for an input',
      () => new torch.nn.ReflectionPad1d(1).forward(any(5)),
      /^ReflectionPad1d: input must be a Tensor/,
    ],
    [
      'no unpooling indices',
      () => new torch.nn.MaxUnpool1d(2).forward(x, any(undefined)),
      /^MaxUnpool1d: indices must be a Tensor/,
    ],
    // a 0-d input reached libtorch's max_unpool3d with no spatial sizes: a segmentation fault
    [
      'a 0-d input to unpool',
      () => new torch.nn.MaxUnpool3d(1).forward(torch.scalarTensor(1), x),
      /^MaxUnpool3d: the input must be 4-d or 5-d/,
    ],
    // ... and so did the raw operators, with a 0-d input or too short an output_size
    [
      'a 0-d input to aten.max_unpool3d',
      () => torch.aten.max_unpool3d(torch.scalarTensor(1), x, [], [1, 1, 1], [0, 0, 0]),
      /^aten::max_unpool3d: argument 'self' must be a 4-d or 5-d Tensor, got a 0-d one/,
    ],
    [
      'a short output_size to aten.max_unpool2d',
      () => torch.aten.max_unpool2d(torch.ones([1, 2, 2]), torch.zeros([1, 2, 2], 'int64'), [4]),
      /^aten::max_unpool2d: argument 'output_size' must be 2 integers, got/,
    ],
    [
      'float indices',
      () => new torch.nn.MaxUnpool2d(1).forward(torch.ones([1, 2, 2]), torch.ones([1, 2, 2])),
      /^MaxUnpool2d: indices must be int64/,
    ],
    [
      'a symbol for an input',
      () => new torch.nn.Unflatten(0, [2]).forward(any(Symbol('s'))),
      /^Unflatten: input must be a Tensor, got Symbol\(s\)/,
    ],
    [
      'a number for a layer',
      () => new torch.nn.Sequential(any(5)),
      /^Sequential: submodule '0' must be a Module/,
    ],
    ['a state of a number', () => linear.loadStateDict(any(5)), /^loadStateDict: state must be an object/],
    [
      'an array for a weight',
      () => linear.loadStateDict(any({ weight: [], bias: x })),
      /^loadStateDict: state\['weight'\] must be a Tensor/,
    ],
    // options objects that are null, and lists and callbacks that are not
    [
      'round with null options',
      () => torch.special.round(x, any(null)),
      /^special.round: options must be an object, got null/,
    ],
    [
      'softmax with null options',
      () => torch.special.softmax(x, 0, any(null)),
      /^special.softmax: options must be an object/,
    ],
    [
      'cumsum with null options',
      () => torch.cumsum(x, 0, any(null)),
      /^cumsum: options must be an object, got null/,
    ],
    [
      'cumprod with null options',
      () => x.cumprod(0, any(null)),
      /^cumprod: options must be an object, got null/,
    ],
    [
      'nonzero with null options',
      () => x.nonzero(any(null)),
      /^nonzero: options must be an object, got null/,
    ],
    [
      'searchsorted with null options',
      () => torch.searchsorted(x, x, any(null)),
      /^searchsorted: options must be an object/,
    ],
    ['roll with null dims', () => torch.roll(x, 1, any(null)), /^roll: dims must be an array, got null/],
    [
      'isChannelsLastContiguous of null',
      () => torch.isChannelsLastContiguous(any(null), [1]),
      /^tailor: isChannelsLastContiguous: shape must be an array of numbers/,
    ],
    [
      'parallelBranches of a string',
      () => torch.parallelBranches('cpu', any('x')),
      /^tailor: parallelBranches: branches must be an array, got 'x'/,
    ],
    [
      'withBranchStreams of junk',
      () => torch.withBranchStreams(true, any(5)),
      /^tailor: withBranchStreams: fn must be a function/,
    ],
    [
      'checkOpSchemas of null',
      () => torch.checkOpSchemas(any(null)),
      /^tailor: checkOpSchemas: expected must be an object, got null/,
    ],
    [
      'restoreTorchRng of null',
      () => torch.restoreTorchRng(any(null)),
      /^tailor: restoreTorchRng: checkpoint must be an object/,
    ],
    [
      'restoreFrom of null',
      () => torch.restoreFrom(any(null), 'weights', () => 1),
      /^tailor: restoreFrom: checkpoint must be an object/,
    ],
    [
      'AvgPool3d with null options',
      () => new torch.nn.AvgPool3d(4, 3, 0, any(null)),
      /^AvgPool3d: options must be an object, got null/,
    ],
    [
      'TransformerEncoderLayer.forward of undefined',
      () => encoder.forward(any(undefined)),
      /^TransformerEncoderLayer: src must be a Tensor, got undefined/,
    ],
    [
      'ReduceLROnPlateau with null options',
      () => new torch.optim.ReduceLROnPlateau(sgd, any(null)),
      /^ReduceLROnPlateau: options must be an object, got null/,
    ],
    [
      'checkAmp of a deep array',
      () => torch.checkAmp(any(deep), 'cpu'),
      /^AmpUnsupportedError: unknown mode an array/,
    ],
    [
      'updateCheckpointExtra of a number',
      () => torch.updateCheckpointExtra(any(5), () => 1),
      /^tailor: updateCheckpointExtra: base must be a non-empty string, got 5/,
    ],
  ];
  try {
    for (const [what, call, message] of cases) {
      const t = performance.now();
      assert.throws(
        () => torch.tidy(call),
        (e: unknown) => {
          const text = `${(e as Error).name}: ${(e as Error).message}`;
          assert.match(message.source.startsWith('^RangeError') ? text : (e as Error).message, message, what);
          assert.ok(
            e instanceof ArgumentError ||
              !(e instanceof TypeError) ||
              /^\w[\w.]*: /.test((e as Error).message),
            what,
          );
          return true;
        },
        what,
      );
      assert.ok(performance.now() - t < 1000, `${what} took ${performance.now() - t} ms`);
    }
    // an empty Sequential returns what it is given when that is not a tensor (PyTorch returns the input)
    const empty = new torch.nn.Sequential();
    assert.equal(empty.forward(any(Infinity)), Infinity);
    empty.dispose();
  } finally {
    sgd.dispose();
    linear.dispose();
    encoder.dispose();
    torch.dispose([x, param]);
  }
  assert.equal(torch.liveTensors(), live, 'no tensor leaked');
});
