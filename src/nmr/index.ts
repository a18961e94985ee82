// The nmr system as the CLI and the reports use it.
export { loadConfig, NmrConfigError, resolveConfig } from './train/config.js';
export { ABLATIONS, formatAblationTable, runAblation } from './train/ablation.js';
export { TrainingDivergedError, trainNmr } from './train/trainer.js';
export { NmrDataError, NmrFormatError } from './io/errors.js';
export {
  loadDenoiser,
  loadDenoiserInfo,
  modelDenoiser,
  denoiseSpectra,
  denoiseStacks,
  isStackModel,
} from './model/denoise.js';
export { checkDomain, NOISE_FAR, type ProcessingDomain, type TrainingDomain } from './model/domain.js';
export { preprocessStack } from './pipeline/preprocess.js';
export { writeJcampSpectrum } from './io/jcamp-writer.js';
export { readNmr } from './io/load.js';
export { isBrukerDir } from './io/bruker.js';
export { writeCsvSpectrum } from './io/csv.js';
export { processFid, type Apodization } from './process.js';
export { Dataset } from './data/dataset.js';
export { type Spectrum, type Fid } from './types.js';
export {
  checkLevels,
  experimentsFileOf,
  parseExperimentsArg,
  readExperimentsFile,
  type ExperimentsFile,
} from './data/experiments.js';
export { UNet1d, formatParameterSummary } from './model/unet.js';
export { datasetYardSamples, experimentYardSamples } from './eval/yard-data.js';
export {
  runYardstick,
  type YardMethod,
  type YardSample,
  type Matched,
  type ReferenceReport,
  type YardstickReport,
} from './eval/yardstick.js';
export {
  SINGLE_BASELINES,
  applyBaseline,
  DEFAULT_TUNED,
  isSingleBaseline,
  type Tuned,
} from './eval/single.js';
export { writeSemiSyntheticDataset, writeSyntheticDataset } from './data/generate.js';
export { FAMILIES } from './data/simulate.js';
export { BASELINES, evaluateDataset, type BaselineName, type EvaluationReport } from './eval/evaluate.js';
export { toSpectrum, type ConvertOptions } from './convert.js';
export { isPowerOfTwo } from './fft.js';
export { type RescaleMethod } from './pipeline/rescale.js';
export { realStack, type RealStack } from './realstack.js';
export { type Metrics } from './eval/metrics.js';
export { inverseVarianceFusion } from './pipeline/fusion.js';
