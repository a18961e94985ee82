// torch.utils as a namespace: activation checkpointing under PyTorch's path
// (torch.utils.checkpoint), and the data utilities (torch.utils.data, also `data` at the top level).
/** Activation checkpointing (torch.utils.checkpoint): checkpoint and checkpointSequential. */
export * as checkpoint from './activation-checkpoint.js';
/** Datasets, samplers and the DataLoader (torch.utils.data; the same as the top-level `data`). */
export * as data from './data.js';
