// Datasets, seeded samplers and the DataLoader.
export * from './dataset.js';
export * from './sampler.js';
export { DataLoader, batchToTensors, type DataLoaderOptions, type WorkerDataset } from './loader.js';
