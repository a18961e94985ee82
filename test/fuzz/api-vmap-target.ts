// The API fuzz target of vmap and torch.func: a random Tensor method or nn.functional function
// (hostile arguments at times) run on batched tensors inside vmap, with in_dims/out_dims sensible or hostile, nested at times, and at times
// autograd.grad with batched gradients, a vectorized Jacobian, or a torch.func transform. Batched tensors hide a dimension
// from every operator and refuse strides, data and some operators inside libtorch; what this looks
// for is a crash or an abort there, and any error that names nothing.
import type { Tensor } from '../../src/torch/index.js';
import type { Pools, Torch } from './api-pools.js';
import { callMethod, functionsOf, invoke, type Fn } from './api-calls.js';

const SKIP = /^(constructor|registerHook|retainGrad|backward)$/;

/** Runs one hostile use of vmap. */
export function fuzzVmap(torch: Torch, p: Pools, note: (l: string) => void): unknown {
  const shape = p.pick([[3, 2], [2, 3, 2], [4], [2, 1, 3]]);
  const x = p.chance(0.85) ? torch.randn(shape, p.pick(['float32', 'float64'] as const)) : p.tensor();
  const y = p.chance(0.8) ? torch.randn(shape) : p.value('tensor');
  if (p.chance(0.15)) {
    const z = torch.randn([3]).requiresGrad_();
    const out = z.mul(z.sin());
    const grads = p.chance(0.8) ? [torch.eye(3)] : [p.value('tensor')];
    return invoke(torch, note, 'autograd.grad(isGradsBatched)', torch.autograd.grad as Fn, undefined, [
      [out],
      [z],
      { gradOutputs: grads, isGradsBatched: p.chance(0.9) ? true : p.value('any') },
    ]);
  }
  if (p.chance(0.25)) {
    // A torch.func transform of a Tensor method (or a hostile function), then its result called.
    const [name, transform] = p.pick(functionsOf(torch.func).filter(([n]) => n !== 'vmap'));
    const f = p.chance(0.8)
      ? (...a: unknown[]) =>
          a[0] instanceof torch.Tensor ? callMethod(torch, p, note, 'Tensor(func)', a[0], SKIP) : a[0]
      : p.value('fn');
    const args = [f, ...p.args(['any', 'any', 'options'], p.rng.int(3))];
    const made = invoke(
      torch,
      note,
      `func.${name}`,
      transform,
      undefined,
      name === 'functionalCall' ? p.args(['any', 'options', 'any'], 3) : args,
    );
    if (typeof made !== 'function') return made;
    return invoke(
      torch,
      note,
      `func.${name}(...)`,
      made as Fn,
      undefined,
      p.chance(0.8) ? [x, y] : p.args(['any', 'any'], 2),
    );
  }
  if (p.chance(0.1))
    return invoke(
      torch,
      note,
      'autograd.functional.jacobian',
      torch.autograd.functional.jacobian as Fn,
      undefined,
      [
        (t: Tensor) => callMethod(torch, p, note, 'Tensor(dual/batched)', t, SKIP),
        torch.randn([3]),
        { vectorize: true, strategy: p.pick(['reverse-mode', 'forward-mode', p.value('any')]) },
      ],
    );
  // At times a function of nn.functional (layers and losses: tailor's own batching rules answer
  // many of them, and must leave what they do not cover to the operator's own checks).
  const functional = functionsOf(torch.nn.functional);
  const body = (a: Tensor, b: unknown) => {
    if (!(a instanceof torch.Tensor)) return a;
    if (p.chance(0.25)) {
      const [name, f] = p.pick(functional);
      const rest = p.args(['any', 'options'], p.rng.int(3));
      return invoke(
        torch,
        note,
        `F.${name}(batched)`,
        f,
        undefined,
        p.chance(0.6) ? [a, b, ...rest] : [a, ...rest],
      );
    }
    return p.chance(0.8)
      ? callMethod(torch, p, note, 'Tensor(batched)', a, SKIP)
      : invoke(torch, note, 'Tensor(batched).add', a.add as Fn, a, [b]);
  };
  const inDims = p.chance(0.7) ? p.pick([0, [0, 0], [0, null], -1]) : p.value('any');
  const outDims = p.chance(0.8) ? 0 : p.value('any');
  // At times vmap's options (randomness, chunkSize), sensible or hostile, and a random operator.
  const options = p.chance(0.3)
    ? {
        randomness: p.pick(['error', 'different', 'same', p.value('any')]),
        chunkSize: p.pick([1, 2, null, p.value('any')]),
      }
    : p.chance(0.05)
      ? p.value('any')
      : {};
  const random = (a: Tensor) =>
    a instanceof torch.Tensor && p.chance(0.5)
      ? a.add(torch.randLike(a))
      : torch.nn.functional.dropout(a, p.pick([0.5, 0, p.value('any')]) as number, p.chance(0.8));
  const fnBody = p.chance(0.15) ? random : body;
  const mapped = torch.vmap(fnBody as never, inDims as never, outDims as never, options as never);
  const fn = p.chance(0.2) ? torch.vmap(mapped as never, 0, 0) : mapped;
  return invoke(
    torch,
    note,
    'vmap(...)',
    fn as Fn,
    undefined,
    p.chance(0.9) ? [x, y] : p.args(['tensor', 'any'], 2),
  );
}
