// The training losses of the NMR denoiser (frequency domain, real part), on tensors:
//   y, x     [B, G, L]  model outputs and inputs for G levels of each sample (aligned, rescaled);
//                       group 0 is the target input k = 0
//   target   [B, L]     pseudo ground truth s_hat (the SNR-weighted fusion of the other levels)
//   peak     [B, L]     peak mask M (0/1), base [B, L] baseline mask B (0/1)
// Every function returns a scalar tensor. scripts/golden/nmr_losses.py computes the same
// quantities with PyTorch 1.13 for the tests.
import { Tensor, tidy, zeros } from '../../torch/index.js';

/** z[..., 1:] - z[..., :-1] along the last dimension. */
export function diff1(z: Tensor): Tensor {
  return tidy(() => {
    const n = z.size(-1);
    return z.narrow(-1, 1, n - 1).sub(z.narrow(-1, 0, n - 1));
  });
}

/** z[..., 2:] - 2 z[..., 1:-1] + z[..., :-2]. */
export function diff2(z: Tensor): Tensor {
  return tidy(() => {
    const n = z.size(-1);
    return z
      .narrow(-1, 2, n - 2)
      .sub(z.narrow(-1, 1, n - 2).mul(2))
      .add(z.narrow(-1, 0, n - 2));
  });
}

/**
 * Reconstruction loss with the peak weighting: mean(W |y0 - s_hat|), W = wPeak inside M and wBase
 * elsewhere. (Every point outside M counts as baseline: weighting wBase * B + wPeak * M instead
 * would give weight 0 to the eroded gap between the two masks.)
 */
export function peakWeightedL1(y0: Tensor, target: Tensor, peak: Tensor, wPeak: number, wBase = 1): Tensor {
  return tidy(() => {
    const weight = peak.mul(wPeak - wBase).add(wBase);
    return weight.mul(y0.sub(target).abs()).mean();
  });
}

/** Derivative loss: mean |diff1(y0) - diff1(s_hat)| (keeps line shapes and peak slopes). */
export function derivativeL1(y0: Tensor, target: Tensor): Tensor {
  return tidy(() => diff1(y0).sub(diff1(target)).abs().mean());
}

/** Baseline curvature: mean |diff2(y0) * B[1:-1]| (second differences inside the baseline only). */
export function baselineCurvature(y0: Tensor, base: Tensor): Tensor {
  return tidy(() => {
    const n = base.size(-1);
    return diff2(y0)
      .mul(base.narrow(-1, 1, n - 2))
      .abs()
      .mean();
  });
}

/**
 * Multi-SNR consistency: the outputs for different levels of one sample should be the same
 * spectrum; the mean over pairs g < h of mean |y_g - y_h| (y [B, G, L]); 0 when G < 2.
 */
export function consistencyL1(y: Tensor): Tensor {
  return tidy(() => {
    const groups = y.size(1);
    if (groups < 2) return zeros([]);
    let sum: Tensor | null = null;
    let count = 0;
    for (let g = 0; g < groups; g++) {
      for (let h = g + 1; h < groups; h++) {
        const term = y.select(1, g).sub(y.select(1, h)).abs().mean();
        sum = sum ? sum.add(term) : term;
        count++;
      }
    }
    return sum!.div(count);
  });
}

export interface ResidualRatioOptions {
  /** Level index k of each group (the T exponent is the level difference). */
  levels: number[];
  /** T per sample [B] (e.g. the pipeline's estimate) or one number for all. */
  T: Tensor | number;
  /** Added to both residual norms (keeps the ratio finite). */
  eps?: number;
  /** Samples with fewer baseline points than this are left out (default 8). */
  minBaselinePoints?: number;
}

/**
 * The T constraint: the noise removed from each level should scale as the levels' noise does.
 * L_T = mean over pairs g < h and samples of |log R_gh - log alpha_gh|, with
 * R_gh = (||r_g B||_2 + eps) / (||r_h B||_2 + eps), r = x - y, the residual (the noise removed).
 *
 * Direction of alpha: level k + 1 has T times the SNR of level k and all levels are rescaled to
 * one signal scale, so the noise of level i is T^(j-i) times that of level j > i: R_ij ~ T^(j-i),
 * alpha_ij = T^(j-i) (not its inverse).
 * Returns 0 when fewer than two groups are given or no sample has enough baseline.
 */
export function residualRatioLoss(x: Tensor, y: Tensor, base: Tensor, options: ResidualRatioOptions): Tensor {
  return tidy(() => {
    const groups = y.size(1);
    const { levels } = options;
    if (levels.length !== groups)
      throw new RangeError(`residualRatioLoss: ${levels.length} levels for ${groups} groups`);
    if (groups < 2) return zeros([]);
    const eps = options.eps ?? 1e-8;
    const valid = base
      .sum(-1)
      .ge(options.minBaselinePoints ?? 8)
      .to('float32'); // [B]
    const nValid = valid.sum().item();
    if (nValid === 0) return zeros([]);
    const logT = typeof options.T === 'number' ? Math.log(options.T) : options.T.log();
    // ||r_g B||_2 per sample and group; the tiny constant keeps sqrt differentiable at 0.
    const norms = x.sub(y).mul(base.unsqueeze(1)).square().sum(-1).add(1e-20).sqrt().add(eps); // [B, G]
    const logNorms = norms.log();
    let sum: Tensor | null = null;
    let count = 0;
    for (let g = 0; g < groups; g++) {
      for (let h = g + 1; h < groups; h++) {
        const logAlpha =
          typeof logT === 'number' ? logT * (levels[h]! - levels[g]!) : logT.mul(levels[h]! - levels[g]!);
        const dev = logNorms.select(1, g).sub(logNorms.select(1, h)).sub(logAlpha).abs();
        const term = dev.mul(valid).sum().div(nValid);
        sum = sum ? sum.add(term) : term;
        count++;
      }
    }
    return sum!.div(count);
  });
}

/**
 * Laplace negative log-likelihood of the target under the predicted per-point scale b = exp(s),
 * up to the constant log 2: mean(|y0 - s_hat| / b + s). The mean is detached: the scale learns how
 * far the output is from the target without pulling the output towards where that is cheap.
 */
export function laplaceNll(y0: Tensor, target: Tensor, logScale: Tensor): Tensor {
  return tidy(() => y0.detach().sub(target).abs().mul(logScale.neg().exp()).add(logScale).mean());
}

export interface LossWeights {
  /** Peak-mask weight of the reconstruction L1 (default 6) and the weight elsewhere (1). */
  peakWeight: number;
  baseWeight: number;
  /** lambda_1..lambda_4 of the total loss (totalLoss; defaults 0.5, 0.1, 0.5, 0.2). */
  deriv: number;
  curv: number;
  cons: number;
  ratio: number;
  /**
   * Weight of the reconstruction L1 on the other drawn levels k > 0 (level 0's is always on);
   * default 0: only the level-0 output is supervised. It teaches the network inputs of every
   * SNR, so that it does not over-smooth high-SNR spectra.
   */
  recOthers: number;
  /**
   * Weight of a peak-weighted squared error of level 0, mean(W (y0 - s_hat)^2), added to L_rec
   * (default 0). The L1 optimum for a peak the input barely shows is the median
   * guess, often zero, so L1 alone shrinks weak peaks and integrals; the squared error is
   * minimized by the mean and keeps them. Values are in units of the target's maximum, so a
   * weight near 1 / (typical error) balances it with the L1 term (e.g. 100).
   */
  mse: number;
  /** Weight of the Laplace NLL of the scale head ({@link laplaceNll}; default 0, needs model.scaleHead). */
  nll?: number;
}

export const SEED_LOSS_WEIGHTS: LossWeights = {
  peakWeight: 6,
  baseWeight: 1,
  deriv: 0.5,
  curv: 0.1,
  cons: 0.5,
  ratio: 0.2,
  recOthers: 0,
  mse: 0,
  nll: 0,
};

export interface LossParts {
  rec: Tensor;
  deriv: Tensor;
  curv: Tensor;
  cons: Tensor;
  ratio: Tensor;
  /** The scale head's Laplace NLL (0 without one). */
  nll: Tensor;
  total: Tensor;
}

export interface LossBatch {
  x: Tensor;
  y: Tensor;
  target: Tensor;
  /** Per-group targets of groups 1..G-1 [B, G-1, L]; when absent, target is used for every group. */
  targetOthers?: Tensor | null;
  peak: Tensor;
  base: Tensor;
  levels: number[];
  T: Tensor | number;
  /** First group that takes part in consistency and the T constraint (1 leaves level 0 out; default 0). */
  consFrom?: number;
  /** Log-scale of the level-0 output [B, L] (scale head), scored by the Laplace NLL. */
  logScale?: Tensor | null;
}

/**
 * The total loss: L = L_rec + l1 L_deriv + l2 L_curv + l3 L_cons + l4 L_T. The supervised terms use
 * group 0 (level 0; L_rec also the other groups with weight recOthers, and the squared error
 * with weight mse); consistency and the T constraint use the groups from consFrom on. Terms whose weight is
 * 0 are not computed (they are reported as 0).
 */
export function totalLoss(batch: LossBatch, w: LossWeights): LossParts {
  return tidy(() => {
    const y0 = batch.y.select(1, 0);
    let rec = peakWeightedL1(y0, batch.target, batch.peak, w.peakWeight, w.baseWeight);
    const G = batch.y.size(1);
    if ((w.recOthers ?? 0) !== 0 && G > 1) {
      // Mean over the other groups of the same peak-weighted L1 (target broadcast over groups).
      const others = batch.y.narrow(1, 1, G - 1);
      const weight = batch.peak
        .mul(w.peakWeight - w.baseWeight)
        .add(w.baseWeight)
        .unsqueeze(1);
      const targets = batch.targetOthers ?? batch.target.unsqueeze(1);
      const term = weight.mul(others.sub(targets).abs()).mean();
      rec = rec.add(term.mul(w.recOthers));
    }
    if ((w.mse ?? 0) !== 0) {
      const weight = batch.peak.mul(w.peakWeight - w.baseWeight).add(w.baseWeight);
      rec = rec.add(weight.mul(y0.sub(batch.target).square()).mean().mul(w.mse));
    }
    const deriv = w.deriv !== 0 ? derivativeL1(y0, batch.target) : zeros([]);
    const curv = w.curv !== 0 ? baselineCurvature(y0, batch.base) : zeros([]);
    const from = batch.consFrom ?? 0;
    const groups = batch.y.size(1) - from;
    const ySelf = from === 0 ? batch.y : batch.y.narrow(1, from, groups);
    const xSelf = from === 0 ? batch.x : batch.x.narrow(1, from, groups);
    const levels = batch.levels.slice(from);
    const cons = w.cons !== 0 ? consistencyL1(ySelf) : zeros([]);
    const ratio =
      w.ratio !== 0 ? residualRatioLoss(xSelf, ySelf, batch.base, { levels, T: batch.T }) : zeros([]);
    const nll =
      (w.nll ?? 0) !== 0 && batch.logScale ? laplaceNll(y0, batch.target, batch.logScale) : zeros([]);
    const total = rec
      .add(deriv.mul(w.deriv))
      .add(curv.mul(w.curv))
      .add(cons.mul(w.cons))
      .add(ratio.mul(w.ratio))
      .add(nll.mul(w.nll ?? 0));
    return { rec, deriv, curv, cons, ratio, nll, total };
  });
}
