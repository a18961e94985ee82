// The nmr system as the CLI and the reports use it.
export { loadConfig, NmrConfigError, resolveConfig } from './train/config.js';
export {
  ABLATIONS,
  ablationScores,
  formatAblationSpread,
  formatAblationTable,
  runAblation,
} from './train/ablation.js';
export {
  ABLATION_SCORES,
  ablationSpread,
  formatMeanSd,
  type AblationScoreColumn,
  type AblationScores,
  type AblationSpread,
} from './train/ablation-spread.js';
export { TrainingDivergedError, trainNmr } from './train/trainer.js';
export { NmrDataError, NmrFormatError } from './io/errors.js';
export {
  loadDenoiser,
  loadDenoiserInfo,
  modelDenoiser,
  denoiseSpectra,
  denoiseStacks,
  isStackModel,
  blendFidelity,
  NmrFidelityError,
  denoiseWithScale,
  NmrUncertaintyError,
} from './model/denoise.js';
export { checkDomain, NOISE_FAR, type ProcessingDomain, type TrainingDomain } from './model/domain.js';
export { preprocessStack } from './pipeline/preprocess.js';
export { writeJcampSpectrum } from './io/jcamp-writer.js';
export { readNmr, isExperimentDir, type NmrFormat } from './io/load.js';
export { isBrukerDir } from './io/bruker.js';
export { vnmrjPhase } from './io/varian.js';
export { writeCsvSpectrum } from './io/csv.js';
export { processFid, describePhase, type Apodization } from './process.js';
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
export {
  denoiserToOnnx,
  exportDenoiserOnnx,
  unetModelToOnnx,
  unetToOnnx,
  type DenoiserOnnx,
} from './model/onnx.js';
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
export { realStack, splitRow, type RealStack } from './realstack.js';
export { type Metrics } from './eval/metrics.js';
export { inverseVarianceFusion } from './pipeline/fusion.js';

// Types that the exported functions and classes take or return, exported so that the
// reference documents them (type-only: nothing more is loaded at run time).
export type { Converted } from './convert.js';
export type { DatasetManifest, SampleMeta, SampleRecord } from './data/dataset.js';
export type { ExperimentSample, ExperimentsSpec } from './data/experiments.js';
export type { SemiSyntheticOptions } from './data/semisynthetic.js';
export type { SimulationOptions } from './data/simulate.js';
export type { Denoiser, EvaluateOptions, MethodMetrics } from './eval/evaluate.js';
export type { MethodScore, YardstickOptions } from './eval/yardstick.js';
export type { AtFalseRate, OperatingPoints } from './eval/operating.js';
export { confidentPeaks, type ConfidentPeak, type Coverage } from './eval/coverage.js';
export {
  LAPLACE_90,
  CONFIDENCE_DEFINITIONS,
  type ConfidenceDefinition,
  type ConfidenceRule,
  type ConfidenceScore,
} from './eval/confidence.js';
export { calibrateScale, MIN_CALIBRATION_SAMPLES, type CalibrationResult } from './eval/calibrate.js';
export {
  saveScaleCalibration,
  NmrCalibrationDataError,
  NmrCalibrationFactorError,
  type ScaleCalibration,
} from './model/calibration.js';
export { robustSigma } from './pipeline/noise.js';
export type { DomainCheck } from './model/domain.js';
export type { UNetConfig } from './model/unet.js';
export type { PreprocessOptions, PreprocessResult } from './pipeline/preprocess.js';
export type { PhaseFrom, ProcessOptions, ProcessedSpectrum } from './process.js';
export type { ExperimentPath, RealStackOptions } from './realstack.js';
export type { Ablation, AblationOptions, AblationRow } from './train/ablation.js';
export type { NmrTrainConfig } from './train/config.js';
export type { EpochRecord, TrainOptions, TrainResult } from './train/trainer.js';
export type { NmrData } from './types.js';
