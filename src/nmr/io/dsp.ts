// Group delay of the Bruker digital filter, in points. Newer firmware (DSPFVS >= 20) writes GRPDLY
// into acqus; older firmware needs the DSPFVS/DECIM table. The table values are those published
// by Westler and Abildgaard ("DMX digital filters and non-Bruker offline processing III") as
// un-rounded in nmrglue (BSD-3-Clause).
import { NmrFormatError } from './errors.js';

/** Firmware DSPFVS 11; firmware 12 differs from it in three entries. */
const DSPFVS_11: Record<number, number> = {
  2: 46,
  3: 36.5,
  4: 48,
  6: 50.166666666666664,
  8: 53.25,
  12: 69.5,
  16: 72.25,
  24: 70.16666666666667,
  32: 72.75,
  48: 70.5,
  64: 73,
  96: 70.66666666666667,
  128: 72.5,
  192: 71.33333333333333,
  256: 72.25,
  384: 71.66666666666667,
  512: 72.125,
  768: 71.83333333333333,
  1024: 72.0625,
  1536: 71.91666666666667,
  2048: 72.03125,
};

const DSP_TABLE: Record<number, Record<number, number>> = {
  10: {
    2: 44.75,
    3: 33.5,
    4: 66.625,
    6: 59.083333333333336,
    8: 68.5625,
    12: 60.375,
    16: 69.53125,
    24: 61.020833333333336,
    32: 70.015625,
    48: 61.34375,
    64: 70.2578125,
    96: 61.505208333333336,
    128: 70.37890625,
    192: 61.5859375,
    256: 70.439453125,
    384: 61.626302083333336,
    512: 70.4697265625,
    768: 61.646484375,
    1024: 70.48486328125,
    1536: 61.656575520833336,
    2048: 70.492431640625,
  },
  11: DSPFVS_11,
  // Firmware 12 changed only the delays of DECIM 16, 32 and 64.
  12: { ...DSPFVS_11, 16: 71.625, 32: 72.125, 64: 72.375 },
  13: {
    2: 2.75,
    3: 2.8333333333333335,
    4: 2.875,
    6: 2.9166666666666665,
    8: 2.9375,
    12: 2.9583333333333335,
    16: 2.96875,
    24: 2.9791666666666665,
    32: 2.984375,
    48: 2.9895833333333335,
    64: 2.9921875,
    96: 2.9947916666666665,
  },
};

/**
 * Group delay in points: GRPDLY when it is given (> 0), else the table entry for DSPFVS and
 * DECIM; 0 for firmware without a digital filter delay (DSPFVS absent or >= 14 without GRPDLY).
 */
export function brukerGroupDelay(
  grpdly: number | undefined,
  dspfvs: number | undefined,
  decim: number | undefined,
  file: string,
): number {
  if (grpdly !== undefined && grpdly > 0) return grpdly;
  if (dspfvs === undefined || dspfvs >= 14 || dspfvs < 10) return 0;
  if (decim === undefined)
    throw new NmrFormatError(file, '$DECIM', 'missing, but DSPFVS < 14 needs it to find the group delay');
  const v = DSP_TABLE[dspfvs]?.[decim];
  if (v === undefined) {
    throw new NmrFormatError(
      file,
      '$DECIM',
      `no group delay known for DSPFVS ${dspfvs} and DECIM ${decim}`,
      'give GRPDLY explicitly',
    );
  }
  return v;
}
