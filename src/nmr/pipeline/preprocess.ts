// The multi-SNR preprocessing of one sample: align the spectra k = 0..K to the highest-SNR one,
// rescale them inside a peak mask, derive peak/baseline masks from the whole stack, estimate noise,
// SNR and T, and fuse the SNR-weighted pseudo ground truth. Every step is its own function; this
// file only chains them and records what each found.
import { alignStack, type AlignOptions, type Anchor } from './align.js';
import { peakBaselineMasks, type MaskOptions, type Masks } from './masks.js';
import { estimateT, robustSigma, robustSnr } from './noise.js';
import { scaleFactor, type RescaleMethod } from './rescale.js';
import { fusionWeights, weightedFusion, type FusionWeightOptions } from './fusion.js';
import { checkSpectra, checksOf } from '../arguments.js';

/**
 * How {@link preprocessStack} prepares a multi-SNR stack: alignment, rescaling, peak masks, fusion
 * weights.
 */
export interface PreprocessOptions {
  align?: AlignOptions | false;
  rescale?: RescaleMethod | false;
  masks?: MaskOptions;
  fusion?: FusionWeightOptions;
  /** Rescale again against the (leave-one-out) pseudo ground truth this many times (default 0). */
  refinements?: number;
  /** Remove the noise energy from the rescaling sums (errors-in-variables correction; default true). */
  noiseCorrection?: boolean;
  /** Noise estimator in the baseline mask (default 'mad'; 'diff' for crowded spectra). */
  noise?: 'mad' | 'diff';
  /** Method for T (default 'ratio'). */
  tMethod?: 'ratio' | 'loglinear';
}

/**
 * A preprocessed stack: the aligned and rescaled spectra, the shifts, anchors and scales found,
 * noise estimates, masks and the fused spectrum.
 */
export interface PreprocessResult {
  /** Aligned and rescaled spectra, k = 0 (lowest SNR) .. K (reference). */
  spectra: Float64Array[];
  shifts: number[];
  anchors: Anchor[][];
  scales: number[];
  masks: Masks;
  sigmas: number[];
  snrs: number[];
  tHat: number;
  weights: number[];
  pseudoTruth: Float64Array;
}

/** Runs the pipeline on the spectra of one sample ordered from low to high SNR. */
export function preprocessStack(stack: Float64Array[], options: PreprocessOptions = {}): PreprocessResult {
  const c = checksOf('preprocessStack');
  checkSpectra(c, stack, 'stack', { sameLength: true });
  stack.forEach((x, i) => {
    if (!(x instanceof Float64Array)) c.fail(`stack[${i}]`, 'a Float64Array', x);
  });
  c.object(options, 'options');
  const K = stack.length - 1;
  const aligned =
    options.align === false
      ? {
          aligned: stack.map((x) => Float64Array.from(x)),
          shifts: stack.map(() => 0),
          anchors: stack.map(() => [] as Anchor[]),
        }
      : alignStack(stack, K, options.align ?? {});
  const maskOptions = options.masks ?? {};
  // A first mask from the reference alone gives the region where scales are fitted.
  let masks = peakBaselineMasks([aligned.aligned[K]!], maskOptions);
  const method = options.rescale === false ? undefined : (options.rescale ?? 'huber');
  const correct = options.noiseCorrection ?? true;
  const ownSigma = aligned.aligned.map((x) => robustSigma(x, masks.baseline, options.noise));
  let scales = stack.map((_, k) =>
    method && k !== K
      ? scaleFactor(
          aligned.aligned[k]!,
          aligned.aligned[K]!,
          masks.peak,
          method,
          correct ? { sigmaX: ownSigma[k]!, sigmaRef: ownSigma[K]! } : undefined,
        )
      : 1,
  );
  let spectra = aligned.aligned.map((x, k) => x.map((v) => v * scales[k]!));
  let result = finish(spectra, maskOptions, options);
  for (let r = 0; r < (options.refinements ?? 0) && method; r++) {
    masks = result.masks;
    // Each spectrum is fitted against the fusion of the others (leave one out): a target that
    // contains the spectrum's own noise would bias its scale.
    const current = spectra;
    const raw = stack.map((_, k) => {
      const w = fusionWeights(result.snrs, {
        ...options.fusion,
        exclude: [...(options.fusion?.exclude ?? []), k],
      });
      const sigmaTarget = Math.sqrt(w.reduce((a, wj, j) => a + (wj * result.sigmas[j]!) ** 2, 0));
      const noise = correct ? { sigmaX: ownSigma[k]!, sigmaRef: sigmaTarget } : undefined;
      return scaleFactor(aligned.aligned[k]!, weightedFusion(current, w), masks.peak, method, noise);
    });
    // Express everything in the units of the reference K again.
    scales = raw.map((v) => v / raw[K]!);
    spectra = aligned.aligned.map((x, k) => x.map((v) => v * scales[k]!));
    result = finish(spectra, maskOptions, options);
  }
  return { spectra, shifts: aligned.shifts, anchors: aligned.anchors, scales, ...result };
}

function finish(
  spectra: Float64Array[],
  maskOptions: MaskOptions,
  options: PreprocessOptions,
): Pick<PreprocessResult, 'masks' | 'sigmas' | 'snrs' | 'tHat' | 'weights' | 'pseudoTruth'> {
  const masks = peakBaselineMasks(spectra, maskOptions);
  const sigmas = spectra.map((x) => robustSigma(x, masks.baseline, options.noise));
  const snrs = spectra.map((x, k) => robustSnr(x, masks.peak, masks.baseline, sigmas[k]));
  const tHat = estimateT(sigmas, options.tMethod ?? 'ratio');
  const fusion = { ...options.fusion };
  if (fusion.scheme === 'T' && fusion.T === undefined && Number.isFinite(tHat)) fusion.T = tHat;
  const weights = fusionWeights(snrs, fusion);
  return { masks, sigmas, snrs, tHat, weights, pseudoTruth: weightedFusion(spectra, weights) };
}
