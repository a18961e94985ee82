// The tensor library: what users write models with.
export { Tensor, type Scalar } from './tensor.js';
// The Tensor members that live outside tensor.ts, attached first so that every module loaded
// after them finds the whole class.
import './tensor-autograd.js';
import './tensor-views.js';
import './tensor-convert.js';
export type { DType, NumericArray } from './dtype.js';
export { isChannelsLastContiguous, type MemoryFormat } from './memory-format.js';
export { tidy, withScope, TensorScope, keep, dispose, liveTensors } from './scope.js';
export * from './creation.js';
// PyTorch's everyday tensor functions (torch.unique, torch.scatter_add, torch.kron...); importing
// tensor-methods also attaches their Tensor methods (x.unique(), x.scatterAdd(...)).
export * from './tensor-search.js';
export * from './tensor-index.js';
export * from './tensor-shape.js';
export * from './tensor-products.js';
import './tensor-methods.js';
// Reductions, shape functions, constructors from a tensor and distances under PyTorch's names
// (torch.prod, torch.movedim, torch.fullLike, torch.cdist...) and the top-level forms of the core
// Tensor methods (torch.sum, torch.transpose...); importing tensor-methods-more also attaches
// their Tensor methods (x.prod(), x.movedim(...), x.newZeros(...), x.uniform_()).
export {
  prod,
  argmin,
  amin,
  aminmax,
  any,
  all,
  countNonzero,
  allclose,
  isclose,
  equal,
  logdet,
  cov,
  corrcoef,
  trapezoid,
  cumulativeTrapezoid,
  histogram,
  cdist,
  pdist,
  sum,
  mean,
  max,
  min,
  amax,
  argmax,
  logsumexp,
  var_ as var,
  std,
  norm,
  softmax,
  logSoftmax,
  type CovOptions,
  type TrapezoidOptions,
  type HistogramOptions,
  type CdistComputeMode,
} from './tensor-reductions.js';
export {
  flatten,
  unflatten,
  movedim,
  moveaxis,
  swapaxes,
  swapdims,
  ravel,
  vstack,
  hstack,
  dstack,
  columnStack,
  rowStack,
  vsplit,
  hsplit,
  dsplit,
  atleast1d,
  atleast2d,
  atleast3d,
  fliplr,
  flipud,
  diagflat,
  blockDiag,
  take,
  put,
  indexPut,
  isin,
  msort,
  clone,
  detach,
  transpose,
  permute,
  reshape,
  squeeze,
  unsqueeze,
  narrow,
  select,
  indexSelect,
  unbind,
  t,
} from './tensor-shape-more.js';
export { emptyLike, fullLike, randLike, randnLike, randintLike, type LikeOptions } from './tensor-random.js';
export { cosineSimilarity } from './nn/functional.js';
export { pairwiseDistance } from './nn/functional-losses-more.js';
import './tensor-methods-more.js';
// PyTorch's elementwise math, tests, logical and bitwise functions (torch.tan, torch.fmod,
// torch.isnan, torch.bitwiseAnd...); their Tensor methods (x.tan(), x.fmod(2)) and in-place forms
// (x.tan_(), x.sub_(y), x.clamp_(0, 1)) are attached by the two method modules; the core
// methods' function forms (torch.add, torch.exp, torch.eq...) are in tensor-elementwise-core.
export * from './tensor-elementwise-core.js';
export * from './tensor-elementwise.js';
export * from './tensor-arithmetic.js';
export * from './tensor-logical.js';
import './tensor-methods-elementwise.js';
import './tensor-methods-inplace.js';
// Complex tensors: parts and views (torch.real, torch.complex, torch.viewAsReal...); their Tensor
// members (x.real, x.imag, x.conj()...) are attached on import.
export {
  real,
  imag,
  viewAsReal,
  viewAsComplex,
  complex,
  polar,
  angle,
  conj,
  conjPhysical,
  resolveConj,
  isComplex,
  isComplexDtype,
} from './complex.js';
// Sparse COO tensors: creation here, their Tensor members (toDense(), indices()...) attached on import.
export { sparseCooTensor, type SparseCooOptions } from './sparse-tensor.js';
/** Sparse COO tensors' functions (torch.sparse): sum, mm, addmm, softmax, logSoftmax. */
export * as sparse from './sparse.js';
export { noGrad, enableGrad, isGradEnabled, grad } from './autograd.js';
export { vmap } from './vmap.js';
/** torch.func: function transforms (grad, gradAndValue, vjp, jvp, jacrev, jacfwd, hessian, vmap) and functionalCall. */
export * as func from './func.js';
export type { InDims, OutDims, VmapOutput, VmapOptions, VmapRandomness } from './vmap.js';
export type { GradHook } from './autograd-hooks.js';
export {
  engineInfo,
  engineAvailable,
  describeLibtorch,
  libtorchSelection,
  EngineUnavailableError,
  type CudaInfo,
} from './native.js';
export * from './device.js';
export * from './amp.js';
/** Process-wide backend switches (torch.backends): cuDNN's autotuner and determinism. */
export * as backends from './backends.js';
/** What ran: dispatcher operator counts of a piece of work (torch.profiler's key_averages counts). */
export * as profiler from './profiler.js';
/** Image decoding in the addon (as torchvision.io): a JPEG's crop box, resized. */
export * as io from './io.js';
export { CUDAGraph, CudaGraphUnavailableError, cudaGraphsInfo, onSideStream } from './cuda-graph.js';
export {
  onParallelStreams,
  parallelBranches,
  withBranchStreams,
  branchStreamsEnabled,
  type BranchOptions,
  type BranchResult,
} from './streams.js';
/** Data-parallel training over libtorch's c10d (torch.distributed): the torchrun environment, process groups, DDP, DistributedSampler. */
export * as distributed from './distributed/index.js';
export {
  checkOpSchemas,
  assertOpSchemas,
  OpSchemaMismatchError,
  type SchemaMismatch,
} from './schema-check.js';
/** Every libtorch operator the engine binds, by its ATen name (generated from the op schemas): the layer below Tensor's methods. */
export * as aten from './generated/aten.js';
/**
 * Linear algebra (torch.linalg) for real tensors: norms, det, slogdet, inv, solve, solveTriangular,
 * cholesky, eigh, eigvalsh, svd, svdvals, qr, lstsq, pinv, matrixExp, cross, matrixPower,
 * matrixRank, multiDot, tensorinv, tensorsolve, cond, diagonal, vander, vecdot, lu, luFactor,
 * luSolve, ldlFactor, ldlSolve, householderProduct and the _ex forms (invEx, choleskyEx, solveEx,
 * luFactorEx, ldlFactorEx).
 */
export * as linalg from './linalg.js';
/** Discrete Fourier transforms (torch.fft): 1-d, 2-d and n-d, real and Hermitian, frequencies and shifts. */
export * as fft from './fft.js';
export {
  hannWindow,
  hammingWindow,
  blackmanWindow,
  bartlettWindow,
  kaiserWindow,
  stft,
  istft,
  type WindowOptions,
  type HammingWindowOptions,
  type KaiserWindowOptions,
  type FrameOptions,
  type StftOptions,
  type IstftOptions,
} from './signal.js';
/** Layers, the Module base, initialisations and functional operations (torch.nn). */
export * as nn from './nn/index.js';
/** ONNX export: a graph builder (opset 17, onnx-proto) and the ONNX form of the nn layers in evaluation mode. */
export * as onnx from './onnx/index.js';
/** Datasets and their batches (torch.utils.data): map-style datasets read on demand, TensorDataset, Subset, ConcatDataset, randomSplit, defaultCollate, the DataLoader (for await prefetches async items) and samplers, batch and class-balanced included. */
export * as data from './data.js';
/** torch.utils: activation checkpointing (`utils.checkpoint.checkpoint`, `checkpointSequential`) and `utils.data` (the same as `data`). */
export * as utils from './utils-namespace.js';
/** Probability distributions (torch.distributions): sampling on the global generator, logProb, entropy, cdf/icdf, rsample, and klDivergence. */
export * as distributions from './distributions/index.js';
/** Optimizers (SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD, LBFGS) and learning-rate schedules (torch.optim). */
export * as optim from './optim/index.js';
export * from './checkpoint.js';
export * from './pytorch-file.js';
export { gradcheck, type GradcheckOptions } from './gradcheck.js';
/** torch.autograd: grad, gradcheck, the grad-mode functions and `functional` (vjp, jvp, jacobian, hessian, vhp, hvp). */
export * as autograd from './autograd-namespace.js';
/** Special functions (torch.special): error functions, gamma and its relatives, Bessel functions, orthogonal polynomials, xlogy, logit, softmax... */
export * as special from './special.js';
