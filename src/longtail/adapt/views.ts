// The two augmented views of the test pool that SADE's aggregation and PRL's preference search
// compare, as the frozen model sees them.
import * as torch from '../../torch/index.js';
import type { Tensor } from '../../torch/index.js';
import { forEachBatch, type ImageSet } from '../data/source.js';
import type { ImageTransform } from '../data/augment.js';
import { Progress } from '../../util/progress.js';
import type { System } from '../systems/index.js';

/** Two augmented views of every image of the test pool for one epoch. */
export interface EpochViews {
  /** Per-expert logits [E, N, C] of each view. */
  logits: [Tensor, Tensor];
  /** Per-expert pooled features [E, N, D] of each view (PRL: the preference search needs them). */
  features?: [Tensor, Tensor];
}

/**
 * The views of one epoch, computed once over the whole test pool. Every test distribution is a
 * subset of that pool, so the eleven searches share one forward pass per image and view instead
 * of repeating it per distribution (about 7x less work); the views an image gets in an epoch do
 * not depend on which distribution asks for them.
 */
export async function computeEpochViews(
  system: System,
  test: ImageSet,
  viewTransform: ImageTransform,
  o: { epoch: number; seed: number; quiet: boolean },
): Promise<EpochViews> {
  const prl = system.kind === 'prl' ? system : null;
  const parts: Tensor[][] = [[], [], [], []];
  const progress = new Progress({
    label: `test-time views epoch ${o.epoch}`,
    total: test.labels.length,
    unit: 'img',
    quiet: o.quiet,
  });
  const options = {
    batchSize: 256,
    sampler: 'sequential',
    seed: o.seed,
    epoch: o.epoch,
    views: 2,
    transform: viewTransform,
  } as const;
  try {
    await forEachBatch(test, options, (batch) => {
      torch.noGrad(() => {
        const shape = [batch.n, ...batch.shape];
        [batch.x, batch.x2!].forEach((pixels, v) => {
          torch.tidy(() => {
            const x = torch.tensor(pixels, { shape });
            if (prl) {
              const f = prl.model.expertFeatures(x);
              parts[2 + v]!.push(torch.keep(f));
              parts[v]!.push(torch.keep(prl.logitsAt(prl.preference, f)[0]!.logits));
            } else {
              parts[v]!.push(torch.keep(system.evalForward(x).logits));
            }
          });
        });
        progress.tick(batch.n);
      });
    });
    progress.finish();
    const cat = (list: Tensor[]) => torch.keep(torch.cat(list, 1));
    return {
      logits: [cat(parts[0]!), cat(parts[1]!)],
      ...(prl ? { features: [cat(parts[2]!), cat(parts[3]!)] as [Tensor, Tensor] } : {}),
    };
  } finally {
    parts.flat().forEach((t) => t.dispose());
  }
}

export function disposeViews(v: EpochViews): void {
  v.logits.forEach((t) => t.dispose());
  v.features?.forEach((t) => t.dispose());
}
