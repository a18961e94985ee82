// Per-expert pooled features of the balanced test set. With PRL only the generated parameters
// depend on the preference, so the features are computed once and every preference (the
// controllability grid, the dashboard's simplex, test-time search) is scored from them.
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import { forEachBatch, type ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import type { PrlSystem } from './system.js';
import type { GeneratedExperts } from './hypernet.js';
import { NormedLinear } from '../models/heads.js';

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
  system: PrlSystem,
  ds: ImageSet,
  transform: ImageTransform,
  batchSize = 256,
): Promise<ExpertFeatures> {
  const n = ds.labels.length;
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

/** Expert logits [E, N, C] for the generated parameters, from features [E, N, D]. */
export function logitsFromFeatures(system: PrlSystem, features: Tensor, generated: GeneratedExperts): Tensor {
  return torch.tidy(() => {
    const per: Tensor[] = [];
    for (let e = 0; e < system.experts; e++) {
      let f = features.select(0, e);
      const a = generated.affine?.[e];
      if (a) f = f.mul(a.scale).add(a.shift);
      const expert = system.model.experts.at(e);
      per.push(
        expert.classifier instanceof NormedLinear
          ? expert.classifier.forward(f, generated.classifiers[e])
          : expert.classify(f),
      );
    }
    return torch.stack(per, 0);
  });
}

export function featuresTensor(f: ExpertFeatures): Tensor {
  return torch.tensor(f.data, { shape: [f.experts, f.n, f.dim] });
}

/**
 * The model output for a preference: the experts' logits [E, N, C] weighted by r (r = 1/E each
 * gives the plain mean), so the preference controls the head/tail balance at inference.
 */
export function aggregateByPreference(expertLogits: Tensor, preference: number[] | Tensor): Tensor {
  return torch.tidy(() => {
    const r =
      preference instanceof torch.Tensor
        ? preference
        : torch.tensor(preference, { dtype: expertLogits.dtype });
    return expertLogits.mul(r.reshape(-1, 1, 1)).sum(0);
  });
}
