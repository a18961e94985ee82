// L-BFGS in PyTorch 1.13's algorithm and order of operations (torch/optim/lbfgs.py): the two-loop
// recursion over a limited history of steps and gradient changes, a fixed step or the strong Wolfe
// line search (_strong_wolfe, with cubic interpolation), and the same stopping rules. The scalars
// (losses, dot products, step lengths) are JavaScript numbers, that is in double precision: with
// float64 parameters the results are PyTorch's, with float32 ones they agree to float rounding.
import { Tensor } from '../tensor.js';
import { cat } from '../creation.js';
import * as aten from '../generated/aten.js';
import { enableGrad, noGrad } from '../autograd.js';
import { keep, tidy } from '../scope.js';
import { isFloatingPoint } from '../dtype.js';
import {
  Optimizer,
  checkNumber,
  type OptimizerStateDict,
  type ParamGroupInput,
  type ParamState,
  optionsOf,
} from './optimizer.js';
import { strongWolfe } from './line-search.js';
import { ArgumentError } from '../../util/arguments.js';

/** Hyperparameters of LBFGS (torch.optim.LBFGS, its defaults): lr 1, maxIter 20, maxEval maxIter x 5/4 (rounded down), toleranceGrad 1e-7, toleranceChange 1e-9, historySize 100, lineSearchFn null (a fixed step) or 'strong_wolfe'. */
export interface LBFGSOptions {
  lr: number;
  maxIter: number;
  maxEval: number;
  toleranceGrad: number;
  toleranceChange: number;
  historySize: number;
  lineSearchFn: 'strong_wolfe' | null;
}

/** What LBFGS.step calls: clears the gradients, computes the loss, calls backward() and returns the loss (a scalar tensor or a number). */
export type LossClosure = () => Tensor | number;

/** The optimizer's memory between steps (PyTorch's state of the first parameter). */
interface Memory {
  funcEvals: number;
  nIter: number;
  d?: Tensor;
  t?: number;
  oldDirs: Tensor[];
  oldStps: Tensor[];
  ro: number[];
  hDiag?: number;
  prevFlatGrad?: Tensor;
  prevLoss?: number;
}

const listKeys = ['oldDirs', 'oldStps', 'ro'] as const;

/**
 * L-BFGS (torch.optim.LBFGS): a quasi-Newton method for full-batch problems. `step(closure)`
 * runs up to maxIter iterations, each calling the closure (which re-evaluates the loss and its
 * gradients) once, or several times with the strong Wolfe line search, and returns the loss
 * before the first iteration. One parameter group only, as in PyTorch; all parameters on one
 * device. The state is kept on the first parameter, as PyTorch keeps it; in stateDict() its lists
 * (`oldDirs`, `oldStps`, `ro`) are dotted names (`oldDirs.0`, ...), as `loadPytorchFile` names a
 * list's items, and PyTorch's scratch list `al` is left out.
 *
 * @example
 * ```ts
 * import * as torch from 'tailor/torch';
 *
 * const x = torch.keep(torch.tensor([-1.5, 2]).requiresGrad_());
 * const opt = new torch.optim.LBFGS([x], { lineSearchFn: 'strong_wolfe' });
 * const rosenbrock = () => {
 *   opt.zeroGrad();
 *   const [a, b] = x.unbind(0) as [torch.Tensor, torch.Tensor];
 *   const loss = b.sub(a.square()).square().mul(100).add(a.neg().add(1).square());
 *   loss.backward();
 *   return loss;
 * };
 * for (let i = 0; i < 5; i++) opt.step(rosenbrock);
 * console.log(x.toArray()); // close to [1, 1]
 * ```
 */
export class LBFGS extends Optimizer<LBFGSOptions> {
  protected override readonly capturableRefused =
    'its closure, line search and stopping rules read values back from the device';

  constructor(params: Tensor[] | ParamGroupInput<LBFGSOptions>[], options: Partial<LBFGSOptions> = {}) {
    const maxIter = optionsOf('LBFGS', options).maxIter ?? 20;
    super(params, {
      lr: optionsOf(new.target.name, options).lr ?? 1,
      maxIter,
      maxEval: options.maxEval ?? Math.floor((maxIter * 5) / 4),
      toleranceGrad: options.toleranceGrad ?? 1e-7,
      toleranceChange: options.toleranceChange ?? 1e-9,
      historySize: options.historySize ?? 100,
      lineSearchFn: options.lineSearchFn ?? null,
    });
  }

  /** One group only: PyTorch's LBFGS has no per-parameter options. */
  override addParamGroup(group: ParamGroupInput<LBFGSOptions>): void {
    if (this.paramGroups.length > 0) {
      throw new Error("LBFGS: no parameter groups (PyTorch's LBFGS has none): pass one list of parameters");
    }
    super.addParamGroup(group);
  }

  protected validate(h: LBFGSOptions): void {
    checkNumber('LBFGS', 'lr', h.lr);
    checkNumber('LBFGS', 'toleranceGrad', h.toleranceGrad);
    checkNumber('LBFGS', 'toleranceChange', h.toleranceChange);
    for (const field of ['maxIter', 'maxEval', 'historySize'] as const) {
      if (!Number.isInteger(h[field]) || h[field] < 1) {
        throw new RangeError(`LBFGS: invalid ${field} ${String(h[field])} (expected a whole number >= 1)`);
      }
    }
    if (h.lineSearchFn !== null && h.lineSearchFn !== 'strong_wolfe') {
      throw new RangeError(
        `LBFGS: invalid lineSearchFn ${JSON.stringify(h.lineSearchFn)} (expected 'strong_wolfe' or null)`,
      );
    }
  }

  private get params(): Tensor[] {
    return this.paramGroups[0]!.params;
  }

  /** The gradients of all parameters as one flat tensor (zeros where a parameter has none). */
  private flatGrad(): Tensor {
    return cat(this.params.map((p) => p.grad?.reshape(-1) ?? aten.zeros_like(p).reshape(-1)));
  }

  /** p += stepSize x update, the flat update cut into the parameters' shapes. */
  private addFlat(stepSize: number, update: Tensor): void {
    let offset = 0;
    for (const p of this.params) {
      // (a block: the parameter add_ returns must not become the scope's result)
      tidy(() => {
        p.add_(update.narrow(0, offset, p.numel).view(...p.shape), stepSize);
      });
      offset += p.numel;
    }
  }

  /**
   * One optimization step: up to maxIter iterations of L-BFGS, the closure called to evaluate
   * the loss and its gradients (with gradients on, whatever the caller's mode). Returns the
   * loss the first call of the closure gave.
   */
  override step(closure?: LossClosure): number {
    if (typeof closure !== 'function') {
      throw new ArgumentError(
        'LBFGS.step needs a closure that clears the gradients, computes the loss, calls backward() and returns the loss',
      );
    }
    const evaluate = (): number =>
      enableGrad(() =>
        tidy(() => {
          const loss = closure();
          if (typeof loss === 'number') return loss;
          if (!(loss instanceof Tensor) || loss.numel !== 1) {
            throw new TypeError(
              'LBFGS.step: the closure must return the loss, a one-element tensor or a number',
            );
          }
          return loss.item();
        }),
      );
    // every temporary freed on return: what the optimizer keeps between steps is kept explicitly
    return noGrad(() => tidy(() => this.run(evaluate)));
  }

  private run(evaluate: () => number): number {
    const group = this.paramGroups[0]!;
    const { lr, maxIter, maxEval, toleranceGrad, toleranceChange, historySize, lineSearchFn } = group;
    const memory = this.readMemory();
    const origLoss = evaluate();
    let loss = origLoss;
    let currentEvals = 1;
    memory.funcEvals += 1;
    // long-lived tensors are kept (out of any scope) and freed by hand once replaced
    let flatGrad = keep(this.flatGrad());
    let { d, t, hDiag, prevFlatGrad, prevLoss } = memory;
    try {
      if (maxAbs(flatGrad) <= toleranceGrad) return origLoss;
      let nIter = 0;
      while (nIter < maxIter) {
        nIter += 1;
        memory.nIter += 1;
        if (memory.nIter === 1) {
          replace(d, (d = keep(flatGrad.neg())));
          for (const x of [...memory.oldDirs, ...memory.oldStps]) x.dispose();
          memory.oldDirs = [];
          memory.oldStps = [];
          memory.ro = [];
          hDiag = 1;
        } else {
          const dir = d!;
          const stepLength = t!;
          hDiag = tidy(() => {
            const y = flatGrad.sub(prevFlatGrad!);
            const s = dir.mul(stepLength);
            const ys = aten.dot(y, s).item();
            if (ys <= 1e-10) return hDiag!;
            if (memory.oldDirs.length === historySize) {
              memory.oldDirs.shift()!.dispose();
              memory.oldStps.shift()!.dispose();
              memory.ro.shift();
            }
            memory.oldDirs.push(keep(y));
            memory.oldStps.push(keep(s));
            memory.ro.push(1 / ys);
            return ys / aten.dot(y, y).item();
          });
          const scale = hDiag;
          replace(d, (d = keep(tidy(() => this.direction(memory, flatGrad, scale)))));
        }
        if (prevFlatGrad === undefined) prevFlatGrad = keep(flatGrad.clone());
        else prevFlatGrad.copy_(flatGrad);
        memory.prevFlatGrad = prevFlatGrad;
        prevLoss = loss;

        if (memory.nIter === 1) {
          // Python's min(1., 1 / |g|_1): 1 where the quotient is not a number
          const r = 1 / tidy(() => flatGrad.abs().sum().item());
          t = (r < 1 ? r : 1) * lr;
        } else t = lr;
        const dir = d!;
        const gtd = tidy(() => aten.dot(flatGrad, dir).item());
        if (gtd > -toleranceChange) break;

        let lsFuncEvals = 0;
        let optCond = false;
        if (lineSearchFn !== null) {
          const x = this.params.map((p) => keep(p.clone()));
          try {
            const objective = (step: number, direction: Tensor): [number, Tensor] => {
              this.addFlat(step, direction);
              const f = evaluate();
              const g = this.flatGrad();
              this.params.forEach((p, i) => p.copy_(x[i]!));
              return [f, g];
            };
            const found = tidy(() => {
              // PyTorch leaves the search its own toleranceChange (1e-9), whatever the group's
              const r = strongWolfe(objective, t!, dir, loss, flatGrad, gtd);
              return { ...r, g: keep(r.g) };
            });
            replace(flatGrad, (flatGrad = found.g));
            loss = found.f;
            t = found.t;
            lsFuncEvals = found.evals;
          } finally {
            for (const c of x) c.dispose();
          }
          this.addFlat(t, dir);
          optCond = maxAbs(flatGrad) <= toleranceGrad;
        } else {
          this.addFlat(t, dir);
          if (nIter !== maxIter) {
            // in a stochastic setting there is no use re-evaluating after the last iteration
            loss = evaluate();
            replace(flatGrad, (flatGrad = keep(this.flatGrad())));
            optCond = maxAbs(flatGrad) <= toleranceGrad;
            lsFuncEvals = 1;
          }
        }
        currentEvals += lsFuncEvals;
        memory.funcEvals += lsFuncEvals;

        if (nIter === maxIter || currentEvals >= maxEval || optCond) break;
        const stepLength = t;
        if (tidy(() => dir.mul(stepLength).abs().max().item()) <= toleranceChange) break;
        if (Math.abs(loss - prevLoss) < toleranceChange) break;
      }
      return origLoss;
    } finally {
      Object.assign(memory, { d, t, hDiag, prevFlatGrad, prevLoss });
      flatGrad.dispose();
      this.writeMemory(memory);
    }
  }

  /** The two-loop recursion: the approximate inverse Hessian times the negative gradient. */
  private direction(memory: Memory, flatGrad: Tensor, hDiag: number): Tensor {
    const { oldDirs, oldStps, ro } = memory;
    const al: number[] = [];
    const q = flatGrad.neg();
    for (let i = oldDirs.length - 1; i >= 0; i--) {
      al[i] = aten.dot(oldStps[i]!, q).item() * ro[i]!;
      q.add_(oldDirs[i]!, -al[i]!);
    }
    const r = q.mul(hDiag);
    for (let i = 0; i < oldDirs.length; i++) {
      const be = aten.dot(oldDirs[i]!, r).item() * ro[i]!;
      r.add_(oldStps[i]!, al[i]! - be);
    }
    return r;
  }

  /** The memory from the first parameter's state (empty before the first step). */
  private readMemory(): Memory {
    const s = this.state.get(this.params[0]!) ?? {};
    const list = <T>(key: string): T[] => {
      const out: T[] = [];
      while (s[`${key}.${out.length}`] !== undefined) out.push(s[`${key}.${out.length}`] as T);
      return out;
    };
    const num = (key: string): number | undefined => s[key] as number | undefined;
    return {
      funcEvals: num('funcEvals') ?? 0,
      nIter: num('nIter') ?? 0,
      d: s.d as Tensor | undefined,
      t: num('t'),
      oldDirs: list<Tensor>('oldDirs'),
      oldStps: list<Tensor>('oldStps'),
      ro: list<number>('ro'),
      hDiag: num('hDiag'),
      prevFlatGrad: s.prevFlatGrad as Tensor | undefined,
      prevLoss: num('prevLoss'),
    };
  }

  /** Stores the memory as the first parameter's state (tensors already kept, owned by the state). */
  private writeMemory(m: Memory): void {
    const s: ParamState = { funcEvals: m.funcEvals, nIter: m.nIter };
    if (m.d) s.d = m.d;
    if (m.t !== undefined) s.t = m.t;
    for (const key of listKeys) m[key].forEach((v, i) => (s[`${key}.${i}`] = v));
    if (m.hDiag !== undefined) s.hDiag = m.hDiag;
    if (m.prevFlatGrad) s.prevFlatGrad = m.prevFlatGrad;
    if (m.prevLoss !== undefined) s.prevLoss = m.prevLoss;
    this.state.set(this.params[0]!, s);
  }

  /**
   * Restores a state saved by stateDict(): its tensors are flat (the length of all parameters
   * together), so they are checked against that length instead of the first parameter's shape.
   */
  override loadStateDict(dict: OptimizerStateDict): void {
    if (!dict || !Array.isArray(dict.paramGroups) || typeof dict.state !== 'object' || dict.state === null) {
      throw new TypeError('LBFGS.loadStateDict: expected { state, paramGroups }');
    }
    const saved = dict.paramGroups[0];
    if (dict.paramGroups.length !== 1 || !saved || saved.params?.length !== this.params.length) {
      throw new Error(
        `LBFGS.loadStateDict: expected one parameter group of ${this.params.length} parameters, as this optimizer has`,
      );
    }
    const numel = this.params.reduce((n, p) => n + p.numel, 0);
    for (const [id, s] of Object.entries(dict.state)) {
      if (Number(id) !== saved.params[0]) {
        throw new Error(
          `LBFGS.loadStateDict: state for parameter ${id}; LBFGS keeps its state on the first one only`,
        );
      }
      for (const [key, value] of Object.entries(s)) {
        if (value instanceof Tensor && value.numel !== numel) {
          throw new Error(
            `LBFGS.loadStateDict: state '${key}' has ${value.numel} elements, the parameters ${numel} together`,
          );
        }
      }
    }
    const group = this.paramGroups[0] as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(saved)) if (key !== 'params') group[key] = value;
    this.disposeState();
    const first = this.params[0]!;
    for (const s of Object.values(dict.state)) {
      const restored: ParamState = {};
      for (const [key, value] of Object.entries(s)) {
        if (!(value instanceof Tensor)) {
          restored[key] = value;
          continue;
        }
        const copy = noGrad(() =>
          value.toDevice(first.device, {
            dtype: isFloatingPoint(value.dtype) ? first.dtype : value.dtype,
            copy: true,
          }),
        );
        restored[key] = keep(copy.reshape(-1));
        if (restored[key] !== copy) copy.dispose();
      }
      this.state.set(first, restored);
    }
  }
}

function maxAbs(t: Tensor): number {
  return tidy(() => t.abs().max().item());
}

/** Frees a long-lived tensor that a new one replaces (unless it is the same one). */
function replace(old: Tensor | undefined, next: Tensor): void {
  if (old !== undefined && old !== next) old.dispose();
}
