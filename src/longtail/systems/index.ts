// The systems a config can describe: plain multi-expert models and PRL.
export * from './system.js';
export * from './prl.js';
export * from './hypernet.js';
import type { PlainSystem } from './system.js';
import type { PrlSystem } from './prl.js';

/** Any long-tail system; switch on `kind`. */
export type System = PlainSystem | PrlSystem;
export * from './onnx.js';
