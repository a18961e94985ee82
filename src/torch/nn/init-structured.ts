// The torch.nn.init functions with structure beyond a distribution: eye_ and dirac_ (identity
// maps), orthogonal_ (QR of a normal draw), sparse_ (normal values with a fraction zeroed per
// column) and truncNormal_ (inverse-CDF sampling). The random ones draw from libtorch's global
// generator in the order of PyTorch 1.13's torch/nn/init.py, so the same seed gives the same tensor.
import { Tensor } from '../tensor.js';
import { noGrad } from '../autograd.js';
import { tidy } from '../scope.js';
import { cat, empty, tensor } from '../creation.js';
import * as aten from '../generated/aten.js';
import { tensorArg } from '../tensor-args.js';
import { checksOf } from '../../util/arguments.js';

/**
 * Fills the 2-d `t` in place with the identity matrix (ones on the main diagonal, zeros elsewhere;
 * torch.nn.init.eye_), so a Linear layer starts by passing its inputs through. Returns `t`.
 */
export function eye_(t: Tensor): Tensor {
  const c = checksOf('eye_');
  tensorArg(c, t, 't');
  if (t.ndim !== 2)
    c.fail('t', 'a 2-d tensor (a Linear weight); use dirac_ for convolution weights', t.shape);
  noGrad(() =>
    tidy(() => {
      t.zero_();
      aten.diagonal(t).fill_(1);
    }),
  );
  return t;
}

/**
 * Fills the 3-, 4- or 5-d `t` in place with the Dirac delta (torch.nn.init.dirac_): a convolution
 * with this weight copies its input channels to its output channels (the first min(out/groups, in)
 * of each of the `groups` groups), a one at the kernel's centre. Returns `t`.
 */
export function dirac_(t: Tensor, groups = 1): Tensor {
  const c = checksOf('dirac_');
  tensorArg(c, t, 't');
  const shape = t.shape;
  if (shape.length < 3 || shape.length > 5)
    c.fail('t', 'a 3-, 4- or 5-d tensor (a convolution weight); use eye_ for 2-d weights', shape);
  c.integer(groups, 'groups', { min: 1 });
  if (shape[0]! % groups !== 0)
    c.fail('groups', `a divisor of the output channels (dim 0 of the weight, ${shape[0]})`, groups);
  const outPerGroup = shape[0]! / groups;
  const minDim = Math.min(outPerGroup, shape[1]!);
  // The positions of the ones, one index list per dimension, written by a single index_put_.
  const index: number[][] = shape.map(() => []);
  for (let g = 0; g < groups; g++)
    for (let d = 0; d < minDim; d++) {
      index[0]!.push(g * outPerGroup + d);
      index[1]!.push(d);
      for (let k = 2; k < shape.length; k++) index[k]!.push(Math.floor(shape[k]! / 2));
    }
  noGrad(() =>
    tidy(() => {
      t.zero_();
      if (minDim === 0) return;
      const indices = index.map((ix) => tensor(ix, { dtype: 'int64', device: t.device }));
      aten.index_put_(t, indices, tensor([1], { dtype: t.dtype, device: t.device }));
    }),
  );
  return t;
}

/**
 * Fills `t` (at least 2-d) in place with a (semi-)orthogonal matrix times `gain`
 * (torch.nn.init.orthogonal_): the Q of the QR factorisation of a standard normal draw of shape
 * [rows, numel/rows], its columns' signs set by R's diagonal so that Q is uniformly distributed.
 * A tensor with no elements is left as it is. Returns `t`.
 */
export function orthogonal_(t: Tensor, gain = 1): Tensor {
  const c = checksOf('orthogonal_');
  tensorArg(c, t, 't');
  if (t.ndim < 2) c.fail('t', 'a tensor with at least 2 dimensions; use normal_ for 1-d tensors', t.shape);
  c.number(gain, 'gain');
  if (t.numel === 0) return t;
  const rows = t.shape[0]!;
  const cols = t.numel / rows;
  noGrad(() =>
    tidy(() => {
      const flattened = aten.normal_(empty([rows, cols], t.dtype, t.device), 0, 1);
      // A wide matrix is factorised transposed, so that Q has orthonormal rows after transposing back.
      const [q, r] = aten.linalg_qr(rows < cols ? flattened.t() : flattened);
      q.mul_(aten.diag(r, 0).sign());
      t.view(rows, cols).copy_(rows < cols ? q.t() : q);
      t.mul_(gain);
    }),
  );
  return t;
}

/**
 * Fills the 2-d `t` in place as a sparse matrix (torch.nn.init.sparse_, Martens 2010): normal values
 * with standard deviation `std` (default 0.01), then in each column ⌈sparsity·rows⌉ rows, chosen by
 * a random permutation, set to zero. `sparsity` lies in [0, 1]. Returns `t`.
 */
export function sparse_(t: Tensor, sparsity: number, std = 0.01): Tensor {
  const c = checksOf('sparse_');
  tensorArg(c, t, 't');
  if (t.ndim !== 2) c.fail('t', 'a 2-d tensor', t.shape);
  c.number(sparsity, 'sparsity', { min: 0, max: 1 });
  c.number(std, 'std', { min: 0 });
  const [rows, cols] = t.shape as [number, number];
  const numZeros = Math.ceil(sparsity * rows);
  noGrad(() =>
    tidy(() => {
      aten.normal_(t, 0, std);
      // One permutation per column, drawn even when nothing is zeroed, as PyTorch draws them.
      const zeroRows: Tensor[] = [];
      const zeroCols: number[] = [];
      for (let col = 0; col < cols; col++) {
        const perm = aten.randperm(rows);
        if (numZeros === 0) continue;
        zeroRows.push(perm.narrow(0, 0, numZeros));
        for (let k = 0; k < numZeros; k++) zeroCols.push(col);
      }
      if (zeroCols.length === 0) return;
      // The indices stay on the CPU, where randperm draws them (as in PyTorch); libtorch moves them.
      const colIndex = tensor(zeroCols, { dtype: 'int64', device: 'cpu' });
      aten.index_put_(t, [cat(zeroRows), colIndex], tensor([0], { dtype: t.dtype, device: t.device }));
    }),
  );
  return t;
}

/** Options of truncNormal_: the normal's mean (default 0) and std (default 1), and the interval [a, b] (default [-2, 2]). */
export interface TruncNormalOptions {
  /** Mean of the normal distribution before truncation (default 0). */
  mean?: number;
  /** Standard deviation of the normal distribution before truncation (default 1, > 0). */
  std?: number;
  /** Lower end of the interval (default -2). */
  a?: number;
  /** Upper end of the interval (default 2, above `a`). */
  b?: number;
}

/**
 * Fills `t` in place with values from a normal distribution truncated to [a, b]
 * (torch.nn.init.trunc_normal_): uniform values between the normal CDF at a and at b, mapped back
 * through the inverse CDF (erfinv), then clamped to [a, b]. The method suits a mean within about
 * two standard deviations of the interval. Returns `t`.
 */
export function truncNormal_(t: Tensor, options: TruncNormalOptions = {}): Tensor {
  const c = checksOf('truncNormal_');
  tensorArg(c, t, 't');
  c.object(options, 'options');
  const mean = c.number(options.mean ?? 0, 'options.mean');
  const std = c.number(options.std ?? 1, 'options.std', { above: 0 });
  const a = c.number(options.a ?? -2, 'options.a');
  const b = c.number(options.b ?? 2, 'options.b', { above: a });
  const l = normCdf((a - mean) / std);
  const u = normCdf((b - mean) / std);
  noGrad(() => {
    aten.uniform_(t, 2 * l - 1, 2 * u - 1);
    aten.erfinv_(t);
    t.mul_(std * Math.sqrt(2.0));
    t.add_(mean);
    aten.clamp_(t, a, b);
  });
  return t;
}

// The standard normal CDF (1 + erf(x/√2)) / 2 in double precision; erf comes from libtorch, as
// JavaScript has none, on a float64 scalar.
function normCdf(x: number): number {
  return tidy(
    () => (1 + aten.erf(tensor([x / Math.sqrt(2.0)], { dtype: 'float64', device: 'cpu' })).item()) / 2,
  );
}
