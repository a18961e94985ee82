// ONNX export of modules: the graph builder and the layers' ONNX forms.
export {
  ONNX_OPSET,
  OnnxExportError,
  OnnxGraph,
  type OnnxAttribute,
  type OnnxConstant,
  type OnnxDim,
  type OnnxModelInfo,
} from './graph.js';
export { moduleToOnnx, l2NormalizeOnnx, geluOnnx, type OnnxExportable } from './modules.js';
