// Long-tail losses: single-output (CE, balanced softmax, logit adjustment, focal, LDAM-DRW),
// multi-expert (SADE, BalPoE, RIDE), PRL's preference scalarizations, and mixup.
export * from './types.js';
export * from './priors.js';
export * from './single.js';
export * from './experts.js';
export * from './scalarize.js';
export * from './prl.js';
export * from './ride.js';
export * from './mixup.js';
