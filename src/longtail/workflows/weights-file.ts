// Reads a weights file into named tensors by its format: safetensors, or a PyTorch checkpoint.
import { existsSync } from 'node:fs';
import { loadSafetensors, type Tensor } from '../../torch/index.js';
import { InputError } from '../../util/errors.js';

/**
 * The tensors of a .safetensors file by name; `field` names the config field that gave the path
 * in errors. The caller owns (and disposes) the tensors.
 */
export function readWeightsFile(file: string, field = 'weights'): Record<string, Tensor> {
  if (!existsSync(file)) {
    throw new InputError(
      `${field}: '${file}' does not exist (the path is relative to the working directory)`,
    );
  }
  if (/\.safetensors$/i.test(file)) return loadSafetensors(file).tensors;
  throw new InputError(
    `${file}: ${field} must be a .safetensors file; convert a PyTorch checkpoint with ` +
      `python3 -c "import torch, safetensors.torch as s; s.save_file(torch.load('${file}'), 'weights.safetensors')"`,
  );
}
