// Data-parallel training over libtorch's c10d: the torchrun environment, process groups
// (Gloo / NCCL), a DDP-style gradient synchroniser and DistributedSampler semantics.
export * from './env.js';
export * from './process-group.js';
export * from './ddp.js';
export * from './sampler.js';
