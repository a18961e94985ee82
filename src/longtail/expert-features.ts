// Per-expert features of a test set for PRL (the controllability grid, preference search):
// prl/features.ts computes them for in-memory sets; image lists are decoded batch by batch here.
import * as torch from '../torch/index.js';
import type { ImageTransform } from './data/augment.js';
import { forEachBatch, isLazy, type ImageSet } from './data/source.js';
import { computeExpertFeatures, type ExpertFeatures } from './prl/features.js';
import type { PrlSystem } from './prl/system.js';

export async function expertFeaturesOf(
  system: PrlSystem,
  ds: ImageSet,
  transform: ImageTransform,
  batchSize = 256,
): Promise<ExpertFeatures> {
  if (!isLazy(ds)) return computeExpertFeatures(system, ds, transform, batchSize);
  const n = ds.length;
  const experts = system.experts;
  const dim = system.model.featureDim;
  const data = new Float32Array(experts * n * dim);
  const labels = new Int32Array(n);
  for (const m of Object.values(system.modules)) m.eval();
  let offset = 0;
  await forEachBatch(ds, { batchSize, sampler: 'sequential', transform }, (batch) =>
    torch.noGrad(() =>
      torch.tidy(() => {
        const x = torch.tensor(batch.x, { shape: [batch.n, ...batch.shape] });
        const f = system.model.expertFeatures(x).toFloat32Array();
        for (let e = 0; e < experts; e++)
          data.set(f.subarray(e * batch.n * dim, (e + 1) * batch.n * dim), (e * n + offset) * dim);
        labels.set(batch.y, offset);
        offset += batch.n;
      }),
    ),
  );
  return { experts, n, dim, data, labels };
}
