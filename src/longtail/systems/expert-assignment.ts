// RIDE-EA as a system the trainer trains: the trained multi-expert model (frozen: evaluation mode,
// out of the optimizer) and its routers. Training computes every expert's features and logits and
// the routers' BCE loss; evaluation routes (the output is the mean of the consulted experts'
// logits) and reports the experts consulted per image. The modules are saved as model.* (the
// backbone, named as in a plain run's checkpoint) and router.*.
import { tidy, type Tensor } from '../../torch/index.js';
import type { Loss, ModelOutput } from '../losses/types.js';
import type { MultiExpertModel } from '../models/multi-expert.js';
import {
  ExpertRouter,
  expertFeaturesAndLogits,
  type ExpertRouterOptions,
} from '../models/expert-assignment.js';
import type { TrainableSystem } from './system.js';

/** A trained multi-expert model with RIDE-EA's routers; only the routers train. */
export interface EaSystem extends TrainableSystem {
  readonly kind: 'ea';
  readonly model: MultiExpertModel;
  readonly router: ExpertRouter;
  readonly experts: number;
}

/** The routers' loss as a training loss: it reads the per-expert features and logits of the output. */
export function expertAssignmentLoss(router: ExpertRouter): Loss {
  return {
    type: 'RIDEExpertAssignment',
    forward(out: ModelOutput, target: Tensor): Tensor {
      if (!out.features || !out.logits)
        throw new Error('the expert-assignment loss needs per-expert features and logits');
      return router.loss(out.features, out.logits, target);
    },
  };
}

/**
 * RIDE-EA over a trained model: its parameters stop requiring gradients, and the routers (of the
 * model's expert count and feature width) start fresh.
 */
export function eaSystem(
  model: MultiExpertModel,
  options: Omit<ExpertRouterOptions, 'experts' | 'featureDim'> = {},
): EaSystem {
  const router = new ExpertRouter({
    ...options,
    experts: model.experts.length,
    featureDim: model.featureDim,
  });
  router.to(model.device);
  for (const p of model.parameters()) p.requiresGrad_(false);
  return {
    kind: 'ea',
    modules: { model, router },
    frozen: [model],
    model,
    router,
    experts: model.experts.length,
    loss: expertAssignmentLoss(router),
    get device() {
      return model.device;
    },
    trainForward: (x) =>
      tidy(() => {
        const [features, logits] = expertFeaturesAndLogits(model, x);
        return { out: { output: logits.mean(0), logits, features } };
      }),
    evalForward: (x) =>
      tidy(() => {
        const [features, logits] = expertFeaturesAndLogits(model, x);
        const routed = router.route(features, logits);
        return { output: routed.output, logits, expertsPerImage: routed.expertsPerImage };
      }),
  };
}
