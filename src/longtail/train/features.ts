// Per-expert pooled features of a set. With PRL only the generated parameters depend on the
// preference, so the features are computed once and every preference (the controllability
// grid, the dashboard's simplex, test-time search) is scored from them.
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import { forEachBatch, type ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import { setTraining, type PlainSystem } from '../systems/system.js';
import type { PrlSystem } from '../systems/prl.js';
import { FLUSH_BATCHES } from './evaluate.js';

/** Each expert's penultimate features of a whole set, with its labels. */
export interface ExpertFeatures {
  experts: number;
  n: number;
  dim: number;
  /** experts x n x dim */
  data: Float32Array;
  labels: Int32Array;
}

/** Per-expert features of a whole set, in its order (image lists are decoded batch by batch). */
export async function computeExpertFeatures(
  system: PlainSystem | PrlSystem,
  ds: ImageSet,
  transform: ImageTransform,
  batchSize = 256,
): Promise<ExpertFeatures> {
  const n = ds.labels.length;
  const experts = system.experts;
  const dim = system.model.featureDim;
  const data = new Float32Array(experts * n * dim);
  const labels = new Int32Array(n);
  setTraining(system, false);
  let offset = 0;
  // Read back every FLUSH_BATCHES batches, as predict does: on a GPU the next batches are built
  // and launched while the device works, instead of a wait for the device after every batch.
  const pending: { features: Tensor; at: number; n: number }[] = [];
  const flush = () => {
    for (const p of pending) {
      const f = p.features.toFloat32Array();
      for (let e = 0; e < experts; e++)
        data.set(f.subarray(e * p.n * dim, (e + 1) * p.n * dim), (e * n + p.at) * dim);
    }
    torch.dispose(pending.map((p) => p.features));
    pending.length = 0;
  };
  try {
    await forEachBatch(ds, { batchSize, sampler: 'sequential', transform }, (batch) => {
      torch.noGrad(() =>
        torch.tidy(() => {
          const x = torch.tensor(batch.x, { shape: [batch.n, ...batch.shape] });
          pending.push({ features: torch.keep(system.model.expertFeatures(x)), at: offset, n: batch.n });
          labels.set(batch.y, offset);
          offset += batch.n;
        }),
      );
      if (pending.length >= FLUSH_BATCHES) flush();
    });
    flush();
  } finally {
    torch.dispose(pending.map((p) => p.features));
  }
  return { experts, n, dim, data, labels };
}

export function featuresTensor(f: ExpertFeatures): Tensor {
  return torch.tensor(f.data, { shape: [f.experts, f.n, f.dim] });
}
