// Long-tail losses: single-output (CE, balanced softmax, logit adjustment, focal, LDAM-DRW),
// multi-expert (SADE, BalPoE), PRL's preference scalarizations, mixup and the config registry.
export * from './types.js';
export * from './priors.js';
export * from './single.js';
export * from './experts.js';
export * from './scalarize.js';
export * from './prl.js';
export * from './mixup.js';
export * from './registry.js';
