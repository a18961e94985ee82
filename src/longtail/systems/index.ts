// The systems a config can describe: plain multi-expert models and PRL.
export * from './system.js';
export * from './prl.js';
export * from './hypernet.js';
export * from './expert-assignment.js';
import type { PlainSystem } from './system.js';
import type { PrlSystem } from './prl.js';
import type { EaSystem } from './expert-assignment.js';

/** Any long-tail system; switch on `kind`. */
export type System = PlainSystem | PrlSystem | EaSystem;
export * from './onnx.js';
