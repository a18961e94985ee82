// The API targets of the fuzz campaign: instead of mutated files, hostile ARGUMENTS to the public
// tailor/torch API, as a JavaScript caller may pass them. Each input picks one function of an
// area (from the namespace itself, so that new exports are fuzzed too) and an argument list from
// the pools of api-pools.ts, and calls it inside tidy(). The child (child.ts) classifies what
// happens with classifyApiError: a crash, an abort or a hang is a failure, and so is an error that
// names neither the function nor the argument (a TypeError from deep inside tailor).
import type { Rng } from '../../src/util/rng.js';
import { UserError } from '../../src/util/errors.js';
import { Pools, describe, type Kind, type Torch } from './api-pools.js';
import {
  callFrom,
  callMethod,
  construct,
  functionsOf,
  invoke,
  isThenable,
  type Fn,
  type Owned,
} from './api-calls.js';
import { fuzzAutograd } from './api-autograd-target.js';
import { fuzzVmap } from './api-vmap-target.js';
import { fuzzTransforms } from './api-transforms-target.js';
import { fuzzHooks } from './api-hooks-target.js';

/** A fuzz target of the API: `call` runs input i (called inside the child's tidy()). */
export interface ApiFuzzTarget {
  name: string;
  native: true;
  /** Picks a function and its arguments from `rng`, reports the call with `note`, then makes it. */
  call: (torch: Torch, rng: Rng, note: (label: string) => void) => unknown;
}

// Creation functions that are safe to call with anything (no files, no process-wide switches
// that outlast the input except the generator seed and thread count, which the child resets).
const CREATION = [
  'tensor',
  'scalarTensor',
  'zeros',
  'ones',
  'full',
  'zerosLike',
  'onesLike',
  'empty',
  'arange',
  'linspace',
  'eye',
  'rand',
  'randn',
  'randint',
  'randperm',
  'cat',
  'stack',
  'where',
  'oneHot',
  'manualSeed',
  'setRngState',
  'setNumThreads',
];
const CREATION_KINDS: Kind[] = ['shape', 'any', 'dtype', 'str'];

// The products as functions (their methods are fuzzed with the other Tensor methods).
const PRODUCTS = [
  'matmul',
  'mm',
  'bmm',
  'dot',
  'vdot',
  'mv',
  'inner',
  'addmm',
  'addmv',
  'addr',
  'baddbmm',
  'addbmm',
];

// The torch functions left out of the random pick: files, process-wide switches, scopes and
// callbacks run later (their own targets fuzz vmap and grad), the libtorch and CUDA reports.
const TORCH_SKIP =
  /^(load|save|read|update|decode|encode|restore|setDefault|tidy|keep|dispose|withScope|vmap|grad|gradcheck|autocast|noGrad|enableGrad|onParallelStreams|onSideStream|assertOpSchemas|checkOpSchemas|describeLibtorch|libtorchSelection|cuda)/;

// Methods that would fuzz the fuzzer (hooks that run later) or are covered by other targets.
const TENSOR_SKIP = /^(constructor|registerHook)$/;

/** Builds the target list; the functions are read from the namespaces when an input runs. */
export function apiTargets(): ApiFuzzTarget[] {
  const target = (
    name: string,
    body: (torch: Torch, p: Pools, note: (l: string) => void, owned: Owned) => unknown,
  ): ApiFuzzTarget => ({
    name: `api: ${name}`,
    native: true,
    call: (torch, rng, note) => {
      const owned: Owned = [];
      let result: unknown;
      try {
        torch.tidy(() => {
          result = body(torch, new Pools(torch, rng), note, owned);
        });
      } finally {
        // an async method's promise settles after the tidy; its tensors are the method's own
        if (!isThenable(result)) for (const o of owned) o.dispose();
      }
      if (isThenable(result))
        return Promise.resolve(result).finally(() => {
          for (const o of owned) o.dispose();
        });
      return undefined;
    },
  });
  const areas = [
    target('tensor methods and creation', (torch, p, note) => {
      if (p.chance(0.1)) {
        const name = p.pick(PRODUCTS);
        const fn = (torch as unknown as Record<string, Fn>)[name]!;
        const kinds: Kind[] = ['tensor', 'tensor', 'tensor', 'options'];
        return invoke(torch, note, `torch.${name}`, fn, undefined, p.args(kinds, fn.length + p.rng.int(2)));
      }
      if (p.chance(0.15))
        return callFrom(
          torch,
          p,
          note,
          'torch',
          functionsOf(torch).filter(([n]) => !TORCH_SKIP.test(n)),
        );
      if (p.chance(0.35)) {
        const name = p.pick(CREATION);
        const fn = (torch as unknown as Record<string, Fn>)[name]!;
        return invoke(
          torch,
          note,
          `torch.${name}`,
          fn,
          undefined,
          p.args(CREATION_KINDS, Math.max(1, fn.length)),
        );
      }
      const self = p.chance(0.85) ? p.tensor() : p.hostile();
      if (!(self instanceof torch.Tensor))
        return invoke(torch, note, 'torch.cat', torch.cat as Fn, undefined, [self]);
      return callMethod(torch, p, note, 'Tensor', self, TENSOR_SKIP);
    }),
    target('nn layers', (torch, p, note, owned) => {
      const [name, C] = p.pick(
        functionsOf(torch.nn, true).filter(
          ([, c]) =>
            c.prototype instanceof torch.nn.Module &&
            typeof (c.prototype as { forward?: unknown }).forward === 'function',
        ),
      );
      const args = p.args(['int', 'int', p.pick<Kind>(['int', 'options']), 'options'], p.rng.int(4) + 1);
      const m = construct(torch, p, note, owned, `nn.${name}`, C, args) as InstanceType<
        Torch['nn']['Module']
      >;
      if (p.chance(0.8)) {
        const forward = (m as unknown as { forward: Fn }).forward;
        return invoke(
          torch,
          note,
          `nn.${name}.forward`,
          forward,
          m,
          p.args(['tensor', 'tensor', 'tensor'], p.rng.int(3) + 1),
        );
      }
      return callMethod(torch, p, note, `nn.${name}`, m, /^(constructor|dispose|register.*Hook.*)$/);
    }),
    target('nn functional and losses', (torch, p, note) =>
      callFrom(torch, p, note, 'nn.functional', functionsOf(torch.nn.functional)),
    ),
    target('linalg and fft', (torch, p, note) =>
      p.chance(0.5)
        ? callFrom(torch, p, note, 'linalg', functionsOf(torch.linalg))
        : callFrom(torch, p, note, 'fft', functionsOf(torch.fft)),
    ),
    target('special and autograd.functional', (torch, p, note) => {
      if (p.chance(0.5)) return callFrom(torch, p, note, 'special', functionsOf(torch.special));
      const fns: [string, Fn][] = [
        ...functionsOf(torch.autograd.functional),
        ['grad', torch.autograd.grad as Fn],
        ['gradcheck', torch.autograd.gradcheck as Fn],
      ];
      const [name, fn] = p.pick(fns);
      const args = p.args(
        ['fn', p.pick<Kind>(['tensor', 'tensor', 'any']), 'tensor', 'options'],
        p.rng.int(3) + 2,
      );
      if (name === 'grad' || name === 'gradcheck') args[0] = p.value('tensor');
      return invoke(torch, note, `autograd.${name}`, fn, undefined, args);
    }),
    target('distributions', (torch, p, note, owned) => {
      const classes = functionsOf(torch.distributions, true).filter(
        ([, c]) => c.prototype instanceof torch.distributions.Distribution,
      );
      const [name, C] = p.pick(classes);
      // at times parameters most families accept (in (0, 1), one shape), so that the methods and
      // the validateArgs checks are reached, not only the constructors' checks
      const shape = p.pick([[3], [2, 3]]);
      const args = p.chance(0.5)
        ? [
            ...Array.from({ length: Math.max(1, C.length) }, () => torch.rand(shape).mul(0.8).add(0.1)),
            { validateArgs: p.chance(0.8) ? p.chance(0.5) : p.value('any') },
          ]
        : p.args(['tensor', 'tensor', 'options'], p.rng.int(3) + 1);
      const d = construct(torch, p, note, owned, `distributions.${name}`, C, args);
      if (p.chance(0.2)) {
        const [, C2] = p.pick(classes);
        const q = construct(torch, p, note, owned, 'distributions.q', C2, p.args(['tensor', 'tensor'], 2));
        return invoke(
          torch,
          note,
          'distributions.klDivergence',
          torch.distributions.klDivergence as Fn,
          undefined,
          [d, q],
        );
      }
      return callMethod(torch, p, note, `distributions.${name}`, d, /^(constructor|dispose)$/);
    }),
    target('distribution transforms and constraints', fuzzTransforms),
    target('module hooks', fuzzHooks),
    target('optim and schedules', (torch, p, note, owned) => {
      const params = [
        torch.keep(torch.randn([3, 2]).requiresGrad_()),
        torch.keep(torch.randn([2]).requiresGrad_()),
      ];
      owned.push({ dispose: () => torch.dispose(params) });
      torch.tidy(() => params[0]!.sum().add(params[1]!.mul(params[1]!).sum()).backward());
      const optimizers = functionsOf(torch.optim, true).filter(
        ([, c]) => c.prototype instanceof torch.optim.Optimizer,
      );
      const [name, C] = p.pick(optimizers);
      const first = p.chance(0.8) ? params : p.chance(0.5) ? [{ params, ...p.options() }] : p.hostile();
      const opt = construct(torch, p, note, owned, `optim.${name}`, C, [
        first,
        ...p.args(['options'], 1),
      ]) as object;
      if (p.chance(0.5)) {
        const step = (opt as { step: Fn }).step;
        const closure = () => torch.tidy(() => params[0]!.mul(params[0]!).sum());
        return invoke(
          torch,
          note,
          `optim.${name}.step`,
          step,
          opt,
          p.chance(0.7) ? [closure] : p.args(['any'], 1),
        );
      }
      if (p.chance(0.5)) return callMethod(torch, p, note, `optim.${name}`, opt, /^(constructor|dispose)$/);
      // LRScheduler itself is the abstract base
      const schedulers = functionsOf(torch.optim, true).filter(
        ([n]) => /LR$|Scheduler$|Plateau$/.test(n) && n !== 'LRScheduler',
      );
      const [sName, S] = p.pick(schedulers);
      const sArgs = [
        p.chance(0.9) ? opt : p.hostile(),
        ...p.args(['options', 'int', 'number'], p.rng.int(3) + 1),
      ];
      const s = construct(torch, p, note, owned, `optim.${sName}`, S, sArgs) as object;
      return callMethod(torch, p, note, `optim.${sName}`, s, /^(constructor|dispose)$/);
    }),
    target('data and checkpoints in memory', (torch, p, note, owned) => {
      switch (p.rng.int(5)) {
        case 0: {
          const ds = construct(
            torch,
            p,
            note,
            owned,
            'data.TensorDataset',
            torch.data.TensorDataset as unknown as Fn,
            p.args(['tensor', 'tensor'], p.rng.int(3)),
          );
          const loader = construct(
            torch,
            p,
            note,
            owned,
            'data.DataLoader',
            torch.data.DataLoader as unknown as Fn,
            [p.chance(0.8) ? ds : p.hostile(), ...p.args(['options'], 1)],
          );
          note(`iterate ${describe(loader, torch)}`);
          for (const batch of loader as Iterable<unknown>) return torch.dispose(batch);
          return undefined;
        }
        case 1: {
          const [name, C] = p.pick(functionsOf(torch.data, true).filter(([n]) => /Sampler$/.test(n)));
          const s = construct(
            torch,
            p,
            note,
            owned,
            `data.${name}`,
            C,
            p.args(['int', 'int', 'options'], p.rng.int(3) + 1),
          );
          return callMethod(torch, p, note, `data.${name}`, s, /^constructor$/);
        }
        case 2: {
          const [name, fn] = p.pick<[string, Fn]>([
            ['defaultCollate', torch.data.defaultCollate as Fn],
            ['classBalancedWeights', torch.data.classBalancedWeights as Fn],
            ['encodeSafetensors', torch.encodeSafetensors as Fn],
          ]);
          const first = p.chance(0.5) ? { a: p.value('tensor'), b: p.value('tensor') } : p.value('any');
          return invoke(
            torch,
            note,
            name,
            fn,
            undefined,
            p.chance(0.3) ? [[first, first]] : [first, ...p.args(['options'], 1)],
          );
        }
        case 3: {
          const good = torch.encodeSafetensors({ w: torch.randn([2, 3]), b: torch.ones([3], 'int64') });
          const bytes = p.chance(0.6) ? good.subarray(0, p.rng.int(good.length + 1)) : p.value('any');
          const out = invoke(torch, note, 'decodeSafetensors', torch.decodeSafetensors as Fn, undefined, [
            bytes,
            ...p.args(['str'], 1),
          ]);
          return torch.dispose((out as { tensors: unknown }).tensors);
        }
        default: {
          const m = construct(
            torch,
            p,
            note,
            owned,
            'nn.Linear',
            torch.nn.Linear as unknown as Fn,
            [3, 2],
          ) as InstanceType<Torch['nn']['Linear']>;
          const state = p.chance(0.5)
            ? { weight: p.value('tensor'), bias: p.value('tensor') }
            : p.value('any');
          return invoke(torch, note, 'nn.Linear.loadStateDict', m.loadStateDict as Fn, m, [
            state,
            ...p.args(['bool'], 1),
          ]);
        }
      }
    }),
    target('custom autograd Functions and hooks', fuzzAutograd),
    target('vmap, torch.func and batched gradients', fuzzVmap),
  ];
  // One child for every area: what the test run's small campaign uses (the start-up of a child,
  // libtorch loading included, costs more than its 40 inputs).
  const every: ApiFuzzTarget = {
    name: 'api: every area',
    native: true,
    call: (torch, rng, note) => areas[rng.int(areas.length)]!.call(torch, rng, note),
  };
  return [...areas, every];
}

/**
 * A named error: a UserError (ArgumentError and the rest), an error whose message starts with
 * the function it names (`aten::op: ...` from libtorch through the addon, `fn: ...` from tailor's
 * checks), or a plain Error thrown by tailor's own checks (such as a disposed tensor's).
 * Anything else (TypeError: Cannot read properties of undefined, x.map is not a function, stack
 * overflows) is a gap in the API's argument checks.
 */
export function classifyApiError(error: unknown): 'named' | 'other' {
  if (error instanceof UserError) return 'named';
  const message = String((error as Error)?.message ?? '');
  if (/^[A-Za-z_$][\w$.:<>]*(\(\))?: \S/.test(message)) return 'named';
  // V8 and Node-API never throw a plain Error for a failed property access or conversion: a
  // plain Error is one of tailor's own checks (the disposed tensor's message among them)
  if (error instanceof Error && error.constructor === Error) return 'named';
  return 'other';
}
