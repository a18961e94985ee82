// ONNX export of modules: the graph builder and the layers' ONNX forms.
export {
  ONNX_OPSET,
  OnnxExportError,
  OnnxGraph,
  type OnnxAttribute,
  type OnnxConstant,
  type OnnxDim,
  type OnnxElementType,
  type OnnxModelInfo,
} from './graph.js';
export { moduleToOnnx, l2NormalizeOnnx, geluOnnx, type OnnxExportable } from './modules.js';
export { maxPoolWithIndicesToOnnx, maxUnpoolToOnnx, type OnnxMaxPoolOutputs } from './pooling.js';
export {
  lstmToOnnx,
  gruToOnnx,
  type OnnxRecurrentState,
  type OnnxLstmOutputs,
  type OnnxGruOutputs,
} from './recurrent.js';
export {
  multiheadAttentionToOnnx,
  linearOnnx,
  type OnnxMask,
  type OnnxAttentionMasks,
  type OnnxAttentionOptions,
  type OnnxAttentionOutputs,
} from './attention.js';
export {
  transformerEncoderLayerToOnnx,
  transformerEncoderToOnnx,
  transformerDecoderLayerToOnnx,
  transformerDecoderToOnnx,
  transformerToOnnx,
  type OnnxEncoderLayerMasks,
  type OnnxEncoderMasks,
  type OnnxDecoderMasks,
  type OnnxTransformerMasks,
} from './transformer.js';
export { embeddingBagToOnnx, type OnnxEmbeddingBagInputs } from './embedding.js';
export { adaptiveLogSoftmaxToOnnx, type OnnxAdaptiveLogSoftmaxOptions } from './adaptive-softmax.js';
