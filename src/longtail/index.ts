// The long-tail system as the CLI and the reports use it. The folders form layers, each importing
// only from the ones below it (eslint.config.js enforces the order):
//   types/     what every layer shares: the multi-expert output, preferences and their text     metrics/  accuracy, shot groups, calibration
//   data/      readers, long-tailed subsets, augmentation, batches      models/  the ResNets
//   losses/    single-output, multi-expert and PRL losses, mixup; the public losses for own models
//              (functional.ts, criteria.ts)
//   systems/   what is trained: a plain multi-expert model, or PRL (kind 'plain' | 'prl')
//   train/     the training loop, evaluation, per-expert features
//   adapt/     test-time aggregation, preference search, prior matching, controllability
//   config/    the only place that knows config field names: builds data, models and systems
//   workflows/ run directories: training a session, loading a checkpoint, results.json, suites
export type { MultiExpertOutput } from './types/multi-expert-output.js';
export { FEW_SHOT_BELOW, MANY_SHOT_ABOVE, shotGroup, shotGroups, type ShotGroup } from './metrics/metrics.js';
export { PreferenceTextError, parsePreferenceText } from './types/preference-text.js';
export { Preference, PreferenceError } from './types/preference.js';
export { BUILTIN_DATASETS, PUBLISHED_SPLITS, loadBuiltin, type BuiltinDataset } from './data/index.js';
export { LazyImageDataset, findDistributionList, parseImageList, readImageList } from './data/imagelist.js';
export { synthImageList, type SynthImagesOptions, type SynthImagesResult } from './data/synth-images.js';
export {
  INATURALIST_TEST_DISTRIBUTIONS,
  TEST_DISTRIBUTIONS,
  longTailCounts,
  longTailSubset,
  testDistributionCounts,
  type ImbalanceProfile,
  type SubsetSampler,
} from './data/longtail.js';
export { DataFormatError, classCounts } from './data/types.js';
export {
  balancedSoftmaxLoss,
  classBalancedWeights,
  focalLoss,
  ldamLoss,
  logitAdjustedLoss,
  logitAdjustment,
  logPrior,
  type FocalLossOptions,
  type LdamLossOptions,
  type LdamMarginOptions,
  type LogitAdjustedLossOptions,
  type LogitAdjustmentOptions,
  type ReductionOption,
} from './losses/functional.js';
export {
  BalancedSoftmaxLoss,
  CrossEntropyLoss,
  FocalLoss,
  LDAMLoss,
  LogitAdjustLoss,
  LongTailLoss,
  type FocalLossClassOptions,
  type LdamDrwOptions,
  type ReweightingOptions,
} from './losses/criteria.js';
export type { System, PlainSystem, PrlSystem, HostDraws } from './systems/index.js';
export { NonFiniteLossError, type EpochRecord } from './train/trainer.js';
export {
  GraphModeUnavailableError,
  parseGraphMode,
  resolveGraphMode,
  type ExecutionMode,
  type GraphMode,
} from './train/graph.js';
export { DeviceDataTooLargeError, DevicePipelineUnsupportedError } from './data/device-batches.js';
export { ChannelsLastUnsupportedError } from './train/channels-last.js';
export type { GroupResult } from './train/evaluate.js';
export { runTestTime, type TestTimeOptions, type DistributionTestTime } from './adapt/testtime.js';
export {
  LABEL_SHIFT_METHODS,
  SELECTABLE_METHODS,
  TEST_TIME_METHODS,
  type TestTimeMethod,
  type TestTimeMethodName,
} from './adapt/methods.js';
export { methodMeans, methodTable, type MethodRow } from './adapt/method-table.js';
export type { ControllabilityGrid, PreferenceResult } from './adapt/controllability.js';
export {
  ConfigError,
  loadConfig,
  parseConfig,
  withOverrides,
  type TrainConfig,
  type TrainOverrides,
} from './config/config.js';
export { applySettings, parseSetting, type ConfigSetting } from './config/settings.js';
export { tauListFromText } from './config/tau-list.js';
export { loadTestTimeConfig, testTimeOptions } from './config/testtime.js';
export {
  adaptUnlabeled,
  AdaptationError,
  PREDICT_ADAPTATIONS,
  type PredictAdaptation,
  type UnlabeledAdaptation,
} from './adapt/unlabeled.js';
export {
  readPredictInput,
  DEFAULT_POOL_BYTES,
  EmptyInputError,
  ImageShapeError,
  UnreadableImageError,
  type PredictInput,
} from './data/predict-input.js';
export {
  adaptInput,
  buildSession,
  defaultRunDir,
  sessionFromConfigFile,
  type Session,
  type SessionRecord,
} from './config/session.js';
export {
  CheckpointLayoutError,
  type CheckpointLayout,
  type ModelWeightsReport,
} from './models/checkpoint-layout.js';
export {
  RunError,
  describeLayout,
  isWeightsFile,
  loadRun,
  readSessionRecord,
  resolveCheckpoint,
  type LoadedRun,
} from './workflows/load.js';
export {
  evaluateSession,
  testPredictions,
  uniformDetail,
  writeResults,
  type LongtailResults,
} from './workflows/results.js';
export {
  trainAndEvaluate,
  trainSession,
  type SessionTrainOptions,
  type TrainedRun,
} from './workflows/train.js';
export { controllabilityGrid, evaluatePreference } from './workflows/preference.js';
export {
  TestTimeFileError,
  exportRunOnnx,
  readTestTimeChoice,
  type TestTimeChoice,
  runToOnnx,
  type OnnxExport,
  type OnnxExportOptions,
} from './workflows/export.js';
export { ExpertWeightsError, systemToOnnx, type OnnxCombination } from './systems/onnx.js';
export { meanExpertsPerImage } from './train/evaluate.js';
export {
  ExpertRouter,
  ExpertAssignmentModel,
  ROUTER_HIDDEN,
  expertFeaturesAndLogits,
  type ExpertRouterOptions,
  type RoutedOutput,
} from './models/expert-assignment.js';
export { eaSystem, expertAssignmentLoss, type EaSystem } from './systems/expert-assignment.js';
export { saveTestTimeSummary, testTimeSummary, type TestTimeSummary } from './workflows/testtime-summary.js';
export { loadSuite, type Suite } from './workflows/benchmark-suite.js';
export {
  OBJECTIVE_GRIDS,
  SEARCH_OBJECTIVES,
  TUNABLE,
  gridSettings,
  splitPerClass,
  tuneTestTime,
  matchedBatchSize,
  withTunedSetting,
  type Grid,
  type TunableName,
  type TuneResult,
} from './workflows/tune-testtime.js';
export type { SearchObjective } from './adapt/search-objective.js';
export { BENCHMARK_METHODS, BENCHMARK_METHOD_NAMES } from './workflows/benchmark-methods.js';
export { spread, tQuantile975, type Spread } from './workflows/benchmark-stats.js';
export {
  benchmarkTable,
  type BenchmarkTable,
  type BenchmarkRow,
  type MethodRecord,
} from './workflows/benchmark-table.js';
export {
  BenchmarkStaleRunError,
  runBenchmark,
  benchmarkRunDir,
  type BenchmarkOptions,
  type BenchmarkResult,
} from './workflows/benchmark.js';

// Types that the exported functions and classes take or return, exported so that the
// reference documents them (type-only: nothing more is loaded at run time).
export type { LabelShiftResult, ValidationFit } from './adapt/baselines.js';
export type { PriorFit, PriorMatched } from './adapt/prior.js';
export type { Searched } from './adapt/score.js';
export type { AdaptInput } from './adapt/testtime.js';
export type { PrlSection } from './config/config.js';
export type { DataOverrides, ExperimentData } from './config/experiment.js';
export type { ImageTransform } from './data/augment.js';
export type { ExpertFeatures } from './train/features.js';
export type { PredictInputOptions } from './data/predict-input.js';
export type { DecodeOptions, ImageList, ListedImage, ReadListOptions } from './data/imagelist.js';
export type { ImageListPipeline } from './data/imagelist-loader.js';
export type { ListAugmentSpec } from './data/imagelist-augment.js';
export type { LongTailOptions, LongTailSubset } from './data/longtail.js';
export type { ImageDataset } from './data/types.js';
export type { PreferenceInput } from './systems/prl.js';
export type { Predictions } from './train/evaluate.js';
export type { ParallelRun, TrainResult } from './train/trainer.js';
export type { BenchmarkMethod, BenchmarkMethodName } from './workflows/benchmark-methods.js';
export type { SuiteModel } from './workflows/benchmark-suite.js';
export type { CellSpread } from './workflows/benchmark-table.js';
export type { UniformDetail } from './workflows/results.js';
export type { GridSetting, GridValue, TuneOptions, TuneRow, TunedMethod } from './workflows/tune-testtime.js';
