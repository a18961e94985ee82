// Reads a weights file into named tensors by its format: safetensors, or a PyTorch checkpoint
// (torch.save, zip or legacy format; nested dicts become dotted names).
import { existsSync } from 'node:fs';
import { loadPytorchFile, loadSafetensors, type Tensor } from '../../torch/index.js';
import { InputError } from '../../util/errors.js';

/**
 * The tensors of a .safetensors file, or of a PyTorch .pth / .pt / .bin / .tar checkpoint (its
 * tensors under their dotted paths; other objects a trainer stored beside them, such as a config,
 * are left out). `field` names the config field that gave the path in errors. The caller owns
 * (and disposes) the tensors.
 */
export function readWeightsFile(file: string, field = 'weights'): Record<string, Tensor> {
  if (!existsSync(file)) {
    throw new InputError(`'${file}' does not exist (${field} is relative to the working directory)`);
  }
  if (/\.safetensors$/i.test(file)) return loadSafetensors(file).tensors;
  if (/\.(pth|pt|bin|tar|ckpt)$/i.test(file)) {
    return Object.fromEntries(loadPytorchFile(file, { skipObjects: true }));
  }
  throw new InputError(
    `${file}: ${field} must be a .safetensors file or a PyTorch checkpoint (.pth, .pt, .bin, .tar, .ckpt)`,
  );
}
