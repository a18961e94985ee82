// The argument pools of the API fuzz targets (api-targets.ts): values a caller may pass, valid
// ones mixed with hostile ones (wrong types, NaN and huge sizes, empty, zero-size, integer and
// disposed tensors, cyclic and deeply nested arrays). Every value is built fresh for one input
// from its generator, inside the input's tidy(), so the tensors it makes are freed with it.
import type { Rng } from '../../src/util/rng.js';

export type Torch = typeof import('../../src/torch/index.js');
type Tensor = InstanceType<Torch['Tensor']>;

/** Argument kinds: what a valid value of that position looks like. */
export type Kind =
  'tensor' | 'int' | 'dim' | 'number' | 'shape' | 'dtype' | 'str' | 'bool' | 'options' | 'fn' | 'any';

/** The option keys of the API's options objects (any of them may be set, to anything). */
const OPTION_KEYS = [
  'dim',
  'keepdim',
  'reduction',
  'weight',
  'ignoreIndex',
  'labelSmoothing',
  'eps',
  'p',
  'lr',
  'momentum',
  'betas',
  'weightDecay',
  'nesterov',
  'amsgrad',
  'stepSize',
  'gamma',
  'milestones',
  'tMax',
  'etaMin',
  'totalIters',
  'maxLr',
  'totalSteps',
  'bias',
  'kernelSize',
  'stride',
  'padding',
  'dilation',
  'groups',
  'numHeads',
  'batchFirst',
  'affine',
  'dropout',
  'numLayers',
  'hiddenSize',
  'margin',
  'beta',
  'delta',
  'batchSize',
  'shuffle',
  'dropLast',
  'seed',
  'sampler',
  'numSamples',
  'replacement',
  'mode',
  'size',
  'scaleFactor',
  'alignCorners',
  'upper',
  'left',
  'driver',
  'atol',
  'rtol',
  'hermitian',
  'decimals',
  'dtype',
  'createGraph',
  'strict',
  'vectorize',
  'outDims',
  'maxNorm',
  'paddingIdx',
  'validateArgs',
  'loc',
  'scale',
  'covarianceMatrix',
  'scaleTril',
  'precisionMatrix',
  'logInput',
  'full',
  'norm',
];

const STRINGS = [
  'mean',
  'sum',
  'none',
  'L',
  'U',
  'reduced',
  'complete',
  'r',
  'ortho',
  'forward',
  'backward',
  'fro',
  'nuc',
  'float32',
  'float64',
  'int64',
  'bool',
  'cpu',
  'cuda',
  'nearest',
  'bilinear',
  'zeros',
  'reflect',
  'tanh',
  'relu',
  'max',
  'triangular',
  'gelsd',
  'min',
  'cos',
  'linear',
];

export class Pools {
  constructor(
    readonly torch: Torch,
    readonly rng: Rng,
  ) {}

  /** One of the items, uniformly. */
  pick<T>(items: readonly T[]): T {
    return items[this.rng.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.rng.uniform() < p;
  }

  /** A value of `kind`: valid with probability `valid`, hostile otherwise. */
  value(kind: Kind, valid = 0.65): unknown {
    if (!this.chance(valid)) return this.hostile();
    switch (kind) {
      case 'tensor':
        return this.tensor();
      case 'int':
        return this.pick([0, 1, 2, 3, 4, 8, -1]);
      case 'dim':
        return this.pick([0, 1, -1, 2, -2]);
      case 'number':
        return this.pick([0, 1, 0.5, -0.5, 2, 1e-3, 0.9]);
      case 'shape':
        return this.pick([[2, 3], [3], [], [2, 3, 4], [1, 2, 4, 4], [3, 3], [-1], [6]]);
      case 'dtype':
        return this.pick(['float32', 'float64', 'int64', 'int32', 'bool', 'uint8', 'float16']);
      case 'str':
        return this.pick(STRINGS);
      case 'bool':
        return this.chance(0.5);
      case 'options':
        return this.options();
      case 'fn':
        return this.fn();
      case 'any':
        return this.value(
          this.pick(['tensor', 'tensor', 'tensor', 'int', 'dim', 'number', 'shape', 'options', 'str']),
          1,
        );
    }
  }

  /** A valid tensor of one of a few shapes and dtypes (mostly float32). */
  tensor(): Tensor {
    const t = this.torch;
    const shape = this.pick([[3], [2, 3], [3, 3], [2, 3, 4], [1, 3, 8, 8], [2, 3, 5], [4, 2], []]);
    switch (this.rng.int(8)) {
      case 0:
        return t.randint(0, 3, shape);
      case 1:
        return t.rand(shape).gt(0.5);
      case 2:
        return t.randn(shape, 'float64');
      case 3:
        return t.randn(shape).requiresGrad_();
      case 4: {
        // symmetric positive definite: what cholesky, eigh and MultivariateNormal want
        const a = t.randn([3, 3]);
        return a.matmul(a.t()).add(t.eye(3));
      }
      default:
        return t.randn(shape);
    }
  }

  /** An options object with 1-3 keys, each set to a valid-looking or hostile value. */
  options(): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    for (let k = this.rng.int(3) + 1; k > 0; k--) o[this.pick(OPTION_KEYS)] = this.value('any', 0.5);
    return o;
  }

  /** A callback: valid ones (scalar- and tensor-valued), ones that throw or return junk. */
  fn(): (...args: Tensor[]) => unknown {
    return this.pick<(...args: Tensor[]) => unknown>([
      (x) => this.asTensor(x).mul(x).sum(),
      (x) => this.asTensor(x).sin(),
      (x, y) => (y ? this.asTensor(x).mul(y).sum() : this.asTensor(x).exp().sum()),
      () => {
        throw new Error('callback: thrown by the caller');
      },
      () => 5,
      () => undefined,
      (x) => x,
      () => this.torch.ones([2]),
    ]);
  }

  /** x, or the error a caller's function would throw on anything but a tensor. */
  asTensor(x: unknown): Tensor {
    if (!(x instanceof this.torch.Tensor)) throw new Error(`callback: got ${typeof x}, not a Tensor`);
    return x;
  }

  /** A hostile value: a wrong type, a bad number or size, a bad tensor, a recursive structure. */
  hostile(): unknown {
    const t = this.torch;
    switch (this.rng.int(6)) {
      case 0:
        return this.pick<unknown>([undefined, null, '', 'abc', '2', true, 10n, Symbol('s'), () => 1]);
      case 1:
        return this.pick([NaN, Infinity, -Infinity, -1, -7, 0, 0.5, 1e12, 2 ** 53, 2 ** 62, -(2 ** 31)]);
      case 2:
        return this.pick<unknown>([
          {},
          [],
          [1e12],
          [-1, 2],
          [NaN],
          [0.5],
          ['a'],
          [2 ** 31, 2 ** 31, 4],
          [1e6, 1e6],
          [[[[]]]],
          Object.create(null),
          new Float32Array(3),
          new BigInt64Array(2),
          { length: 1e12 },
          { handle: 1 },
        ]);
      case 3: {
        const shape = this.pick([[0], [2, 0], [0, 3], [1, 1, 1, 1, 1, 1, 1, 1], [2, 3]]);
        switch (this.rng.int(6)) {
          case 0:
            return t.zeros(shape, 'int32');
          case 1:
            return t.full(shape, NaN);
          case 2:
            return t.zeros(shape, 'uint8');
          case 3:
            return t.scalarTensor(this.pick([0, -1, 1e30]));
          default:
            return t.zeros(shape);
        }
      }
      case 4: {
        const x = t.ones([2, 3]);
        x.dispose();
        return x;
      }
      default:
        return this.recursive();
    }
  }

  /** A cyclic array or object, or an array nested deeper than the call stack. */
  recursive(): unknown {
    switch (this.rng.int(3)) {
      case 0: {
        const a: unknown[] = [1];
        a.push(a);
        return a;
      }
      case 1: {
        const o: Record<string, unknown> = { dim: 0 };
        o.self = o;
        o.weight = o;
        return o;
      }
      default: {
        let a: unknown = [1];
        for (let k = 0; k < 100_000; k++) a = [a];
        return a;
      }
    }
  }

  /** `count` arguments of the given kinds (the rest 'any'), sometimes fewer or one more. */
  args(kinds: Kind[], count = kinds.length): unknown[] {
    const n = this.chance(0.15) ? this.rng.int(count + 2) : count;
    return Array.from({ length: n }, (_, k) => this.value(kinds[k] ?? 'any'));
  }
}

/** A short description of a value for a finding's label (the call can be replayed with --only). */
export function describe(value: unknown, torch: Torch, depth = 0): string {
  if (value instanceof torch.Tensor) {
    if (value.isDisposed) return 'Tensor(disposed)';
    return `Tensor[${value.shape.join(',')}]${value.dtype}`;
  }
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 20));
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol' || typeof value === 'function') return typeof value;
  if (Array.isArray(value)) {
    if (depth > 2) return '[...]';
    return `[${value
      .slice(0, 4)
      .map((v) => describe(v, torch, depth + 1))
      .join(',')}${value.length > 4 ? ',...' : ''}]`;
  }
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  if (value !== null && typeof value === 'object') {
    if (depth > 2) return '{...}';
    const entries = Object.keys(value).slice(0, 4);
    return `{${entries.map((k) => `${k}:${describe((value as Record<string, unknown>)[k], torch, depth + 1)}`).join(',')}}`;
  }
  return String(value);
}
