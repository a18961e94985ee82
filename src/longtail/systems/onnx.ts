// A long-tail system as one ONNX graph with its combination of experts baked in: the shared trunk
// and every expert from the model's own ONNX forms, then the experts' logits weighted (the plain
// mean, SADE's or BalPoE's learned weights, or PRL's preference) and an optional per-class bias.
// PRL's hypernetwork runs here, once, at the chosen preference: its generated classifiers and
// feature modulation are stored as constants, so the file holds no hypernetwork.
import * as torch from '../../torch/index.js';
import { onnx, type Tensor } from '../../torch/index.js';
import { Preference } from '../types/preference.js';
import type { PrlSystem } from './prl.js';
import type { System } from './index.js';
import { setTraining } from './system.js';

/** How the experts are combined in the exported graph. */
export interface OnnxCombination {
  /**
   * One weight per expert: the output is sum_e w_e z_e. Default: what the system's evalForward
   * does, the mean (1/E each) for a plain system, its preference for PRL.
   */
  weights?: readonly number[];
  /** Added to the combined logits per class (a log-prior shift), when given. */
  bias?: readonly number[];
}

/** Expert weights that cannot combine this system's experts. */
export class ExpertWeightsError extends onnx.OnnxExportError {}

/**
 * The logits' value of `system` applied to the value `x` (the normalized image batch) in `g`, in
 * evaluation mode. PRL: the experts generated for `system.preference` (choose it with `at`).
 */
export function systemToOnnx(
  system: System,
  g: onnx.OnnxGraph,
  x: string,
  combination: OnnxCombination = {},
): string {
  // The routers pick experts per image, a data-dependent graph that the exported fixed
  // combination of expert logits would silently drop.
  if (system.kind === 'ea')
    throw new onnx.OnnxExportError(
      "RIDE-EA's routed model has no ONNX mapping (its routers choose the experts per image); export its stage-1 RIDE run",
    );
  setTraining(system, false);
  const experts = system.experts;
  const logits =
    system.kind === 'prl' ? prlExpertLogits(system, g, x) : system.model.expertLogitsToOnnx(g, x);
  const weights = combination.weights ?? (system.kind === 'prl' ? system.preference.weights : null);
  if (weights && (weights.length !== experts || !weights.every(Number.isFinite)))
    throw new ExpertWeightsError(
      `${weights.length} expert weights for ${experts} experts; give one finite weight per expert`,
    );
  const terms = logits.map((z, e) =>
    g.node('Mul', [z, g.scalar(`combination.w${e}`, weights ? weights[e]! : 1 / experts)]),
  );
  let out = terms.length === 1 ? terms[0]! : g.node('Sum', terms);
  const bias = combination.bias;
  if (bias) {
    const classes = system.model.options.classes;
    if (bias.length !== classes || !bias.every(Number.isFinite))
      throw new ExpertWeightsError(`a logit bias of ${bias.length} values for ${classes} classes`);
    out = g.node('Add', [out, g.constant('logit_bias', { data: Float32Array.from(bias), dims: [classes] })]);
  }
  return out;
}

/** The experts' logits with the classifiers (and feature modulation) generated for the preference. */
function prlExpertLogits(system: PrlSystem, g: onnx.OnnxGraph, x: string): string[] {
  const r = Preference.of(system.preference, system.experts).weights;
  return torch.noGrad(() =>
    torch.tidy(() => {
      const generated = system.hyper.forward(torch.tensor([...r]));
      const features = system.model.expertFeaturesToOnnx(g, x);
      return system.model.experts.items.map((expert, e) => {
        let f = features[e]!;
        const a = generated.affine?.[e];
        if (a) {
          const name = `experts.${e}.generated`;
          f = g.node('Add', [
            g.node('Mul', [f, g.tensor(`${name}.scale`, a.scale)]),
            g.tensor(`${name}.shift`, a.shift),
          ]);
        }
        return expert.classifyToOnnx(g, f, `experts.${e}`, generated.classifiers[e] as Tensor);
      });
    }),
  );
}
