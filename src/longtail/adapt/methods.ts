// The names of the test-time methods, in one list: the CLI, configs and the benchmark suites
// refer to them by these names.
//   none            the model as trained (no test-time step)
//   aggregation     SADE's self-supervised expert aggregation (multi-expert models)
//   preference      PRL's preference search (PRL checkpoints)
//   prior           prior matching: the experts' weights / preference fitted to the test prior
//   prior_adjusted  the balanced scores plus the log of prior matching's EM estimate
//   em              EM (MLLS) prior estimation on the uncalibrated scores
//   em_ts           EM after temperature scaling on the validation split
//   em_bcts         EM after bias-corrected temperature scaling on the validation split
//   bbse            black-box shift estimation with the validation confusion matrix
//   oracle          the log of the true test prior added (labelled: uses the test labels)
/**
 * Every test-time method the results report, in table order (see the comment above for what each does).
 */
export const TEST_TIME_METHODS = [
  'none',
  'aggregation',
  'preference',
  'prior',
  'prior_adjusted',
  'em',
  'em_ts',
  'em_bcts',
  'bbse',
  'oracle',
] as const;
/** One of {@link TEST_TIME_METHODS}. */
export type TestTimeMethodName = (typeof TEST_TIME_METHODS)[number];

/** The label-shift estimators fitted on the validation split (label-shift.ts, calibration.ts). */
export const LABEL_SHIFT_METHODS = ['em', 'em_ts', 'em_bcts', 'bbse'] as const;
export type LabelShiftMethod = (typeof LABEL_SHIFT_METHODS)[number];

/** The methods that run on request; the others are always reported. */
export const SELECTABLE_METHODS = ['aggregation', 'preference', 'prior', ...LABEL_SHIFT_METHODS] as const;
/**
 * A test-time method that runs on request (the others are always reported): one of `SELECTABLE_METHODS`.
 */
export type TestTimeMethod = (typeof SELECTABLE_METHODS)[number];
