// 1D total-variation denoising, argmin_x 1/2 ||x - y||^2 + lambda sum |x_{i+1} - x_i|, solved
// exactly by L. Condat's direct algorithm ("A direct algorithm for 1D total variation
// denoising", IEEE Signal Processing Letters 20(11), 2013), O(n) in practice. A classical
// single-input baseline; it flattens peak tops into plateaus, which the line-shape metrics show.

export function tvDenoise(y: ArrayLike<number>, lambda: number): Float64Array {
  const n = y.length;
  const x = new Float64Array(n);
  if (n === 0) return x;
  if (!(lambda > 0)) {
    for (let i = 0; i < n; i++) x[i] = y[i]!;
    return x;
  }
  let k = 0;
  let k0 = 0;
  let kplus = 0;
  let kminus = 0;
  let umin = lambda;
  let umax = -lambda;
  let vmin = y[0]! - lambda;
  let vmax = y[0]! + lambda;
  const twoLambda = 2 * lambda;
  const minLambda = -lambda;
  for (;;) {
    while (k === n - 1) {
      if (umin < 0) {
        do x[k0++] = vmin;
        while (k0 <= kminus);
        k = kminus = k0;
        vmin = y[k0]!;
        umin = lambda;
        umax = vmin + umin - vmax;
      } else if (umax > 0) {
        do x[k0++] = vmax;
        while (k0 <= kplus);
        k = kplus = k0;
        vmax = y[k0]!;
        umax = minLambda;
        umin = vmax + umax - vmin;
      } else {
        vmin += umin / (k - k0 + 1);
        do x[k0++] = vmin;
        while (k0 <= k);
        return x;
      }
    }
    umin += y[k + 1]! - vmin;
    if (umin < minLambda) {
      do x[k0++] = vmin;
      while (k0 <= kminus);
      k = kplus = kminus = k0;
      vmin = y[k0]!;
      vmax = vmin + twoLambda;
      umin = lambda;
      umax = minLambda;
      continue;
    }
    umax += y[k + 1]! - vmax;
    if (umax > lambda) {
      do x[k0++] = vmax;
      while (k0 <= kplus);
      k = kplus = kminus = k0;
      vmax = y[k0]!;
      vmin = vmax - twoLambda;
      umin = lambda;
      umax = minLambda;
      continue;
    }
    k++;
    if (umin >= lambda) {
      kminus = k;
      vmin += (umin - lambda) / (kminus - k0 + 1);
      umin = lambda;
    }
    if (umax <= minLambda) {
      kplus = k;
      vmax += (umax + lambda) / (kplus - k0 + 1);
      umax = minLambda;
    }
  }
}
