// RIDE's second stage, expert assignment (EA): small routers that decide, image by image, whether
// to consult the next expert. The router after expert i (every expert but the last has one) sees
// expert i's L2-normalised pooled features through a hidden Linear(featureDim, 16) + ReLU, and the
// top-k values of the running mean of the logits of experts 0..i; a final Linear(16 + k, 1),
// shared by the routers or one per router, gives the logit of "consult the later experts". It is
// trained with a pos_weight'ed BCE against "experts 0..i are wrong and some later prefix is right".
// At test time experts are consulted in order while the router says yes (sigmoid > 0.5); the
// output is the mean of the consulted experts' logits. tailor computes every expert and selects:
// the predictions equal RIDE-EA's, the compute is not skipped.
import { Tensor, nn, tidy, aten, cat, stack } from '../../torch/index.js';
import type { MultiExpertModel } from './multi-expert.js';

/** RIDE-EA's router arguments (the reference's names in brackets). */
export interface ExpertRouterOptions {
  /** Number of experts of the backbone (at least 2). */
  experts: number;
  /** Width of each expert's pooled features. */
  featureDim: number;
  /** How many of the largest running-mean logits a router sees [top_choices_num] (default 5). */
  topChoices?: number;
  /** BCE weight of the positive ("consult more experts") class [pos_weight] (default 20). */
  posWeight?: number;
  /** One final Linear shared by the routers [share_expert_help_pred_fc] (default true). */
  shareFc?: boolean;
  /** Consult every expert at test time whatever the routers say [force_all] (default false). */
  forceAll?: boolean;
}

/** Width of a router's hidden layer (fixed at 16 in RIDE). */
export const ROUTER_HIDDEN = 16;

/** A routed evaluation: the output over the consulted experts and how many each image consulted. */
export interface RoutedOutput {
  /** Mean of the consulted experts' logits, [N, C]. */
  output: Tensor;
  /** Number of experts consulted per image, [N] (float32). */
  expertsPerImage: Tensor;
}

/** The routers of RIDE-EA (one per expert but the last). */
export class ExpertRouter extends nn.Module {
  readonly hiddenFcs: nn.ModuleList<nn.Linear>;
  /** The shared final layer (shareFc) ... */
  readonly fc: nn.Linear | null;
  /** ... or one final layer per router. */
  readonly fcs: nn.ModuleList<nn.Linear> | null;
  readonly topChoices: number;
  readonly posWeight: number;
  readonly forceAll: boolean;

  constructor(readonly options: ExpertRouterOptions) {
    super();
    const { experts, featureDim } = options;
    if (!(Number.isInteger(experts) && experts >= 2))
      throw new Error(`expert assignment needs at least 2 experts, got ${experts}`);
    this.topChoices = options.topChoices ?? 5;
    this.posWeight = options.posWeight ?? 20;
    this.forceAll = options.forceAll ?? false;
    if (!(Number.isInteger(this.topChoices) && this.topChoices >= 1))
      throw new Error(`top_choices_num must be a positive integer, got ${this.topChoices}`);
    if (!(this.posWeight > 0)) throw new Error(`pos_weight must be positive, got ${this.posWeight}`);
    const routers = experts - 1;
    const hidden: nn.Linear[] = [];
    for (let i = 0; i < routers; i++) hidden.push(new nn.Linear(featureDim, ROUTER_HIDDEN));
    this.hiddenFcs = this.registerModule('hiddenFcs', new nn.ModuleList(hidden));
    const inWidth = ROUTER_HIDDEN + this.topChoices;
    if (options.shareFc ?? true) {
      this.fc = this.registerModule('fc', new nn.Linear(inWidth, 1));
      this.fcs = null;
    } else {
      this.fc = null;
      const fcs: nn.Linear[] = [];
      for (let i = 0; i < routers; i++) fcs.push(new nn.Linear(inWidth, 1));
      this.fcs = this.registerModule('fcs', new nn.ModuleList(fcs));
    }
    // RIDE applies kaiming_normal_ to every Linear weight, the routers' included.
    this.apply((m) => {
      if (m instanceof nn.Linear) nn.init.kaimingNormal_(m.weight);
    });
  }

  /**
   * Router i's logit [N] from expert i's pooled features [N, D] and the mean logits of experts
   * 0..i [N, C].
   */
  predict(features: Tensor, meanLogits: Tensor, i: number): Tensor {
    return tidy(() => {
      // As RIDE: divided by the norm without an epsilon.
      const f = features.div(features.norm(2, 1, true));
      const hidden = this.hiddenFcs.at(i).forward(f).relu();
      const [top] = aten.topk(meanLogits, this.topChoices, 1);
      const input = cat([top, hidden], 1);
      const fc = this.fc ?? this.fcs!.at(i);
      return fc.forward(input).flatten();
    });
  }

  private checkShapes(features: Tensor, logits: Tensor): void {
    const e = this.options.experts;
    if (features.shape.length !== 3 || features.shape[0] !== e)
      throw new Error(`expert features must be [${e}, N, D], got [${features.shape.join(', ')}]`);
    if (logits.shape.length !== 3 || logits.shape[0] !== e)
      throw new Error(`expert logits must be [${e}, N, C], got [${logits.shape.join(', ')}]`);
    if (logits.shape[2]! < this.topChoices)
      throw new Error(`top_choices_num ${this.topChoices} exceeds the ${logits.shape[2]} classes`);
  }

  /**
   * The training loss from per-expert features [E, N, D], logits [E, N, C] and labels [N]
   * (int64): the mean over routers of BCE(pos_weight) of router i against "the mean of experts
   * 0..i is wrong and the mean of experts 0..j is right for some j > i".
   */
  loss(features: Tensor, logits: Tensor, target: Tensor): Tensor {
    this.checkShapes(features, logits);
    return tidy(() => {
      const e = this.options.experts;
      const running = logits.cumsum(0);
      const correct: Tensor[] = [];
      for (let i = 0; i < e; i++) correct.push(running.select(0, i).argmax(1).eq(target).float());
      const posWeight = aten.full_like(correct[0]!.narrow(0, 0, 1), this.posWeight);
      let total: Tensor | null = null;
      for (let i = 0; i < e - 1; i++) {
        const pred = this.predict(features.select(0, i), running.select(0, i).div(i + 1), i);
        const laterRight = stack(correct.slice(i + 1), 0).amax(0);
        const help = correct[i]!.neg().add(1).mul(laterRight);
        const term = aten.binary_cross_entropy_with_logits(pred, help, null, posWeight, 1);
        total = total ? total.add(term) : term;
      }
      return total!.div(e - 1);
    });
  }

  /**
   * The routed evaluation from per-expert features [E, N, D] and logits [E, N, C]: experts are
   * consulted in order while the router after the last consulted one says yes (sigmoid > 0.5),
   * or all of them with forceAll.
   */
  route(features: Tensor, logits: Tensor): RoutedOutput {
    this.checkShapes(features, logits);
    return tidy(() => {
      const e = this.options.experts;
      const running = logits.cumsum(0);
      let active = aten.ones_like(logits.select(0, 0).select(1, 0));
      let count = active.clone();
      let sum = logits.select(0, 0);
      for (let i = 1; i < e; i++) {
        if (!this.forceAll) {
          const pred = this.predict(features.select(0, i - 1), running.select(0, i - 1).div(i), i - 1);
          active = active.mul(pred.sigmoid().gt(0.5).float());
        }
        count = count.add(active);
        sum = sum.add(logits.select(0, i).mul(active.unsqueeze(1)));
      }
      return { output: sum.div(count.unsqueeze(1)), expertsPerImage: count };
    });
  }
}

/** Per-expert pooled features [E, N, D] and logits [E, N, C] of a multi-expert model. */
export function expertFeaturesAndLogits(model: MultiExpertModel, x: Tensor): [Tensor, Tensor] {
  return tidy(() => {
    const s = model.shared(x);
    const feats = model.perExpert((e) => e.features(s));
    const logits = feats.map((f, i) => model.experts.at(i).classify(f));
    return [stack(feats, 0), stack(logits, 0)];
  });
}

/**
 * A trained multi-expert model (RIDE's stage 1) with RIDE-EA's routers: the backbone's parameters
 * are frozen (requires_grad off) and it stays in evaluation mode whatever train() says, as RIDE
 * sets frozen batch norms to eval before every epoch; only {@link routerParameters} train.
 */
export class ExpertAssignmentModel extends nn.Module {
  readonly backbone: MultiExpertModel;
  readonly router: ExpertRouter;

  constructor(backbone: MultiExpertModel, options: Omit<ExpertRouterOptions, 'experts' | 'featureDim'> = {}) {
    super();
    this.backbone = this.registerModule('model', backbone);
    this.router = this.registerModule(
      'router',
      new ExpertRouter({ ...options, experts: backbone.experts.length, featureDim: backbone.featureDim }),
    );
    for (const p of backbone.parameters()) p.requiresGrad_(false);
    this.train(true);
  }

  override train(mode = true): this {
    super.train(mode);
    this.backbone.train(false);
    return this;
  }

  /** The parameters the optimizer may see: the routers'. */
  routerParameters(): Tensor[] {
    return this.router.parameters();
  }

  /** RIDE-EA's training loss on a batch (images x, int64 labels target). */
  loss(x: Tensor, target: Tensor): Tensor {
    return tidy(() => {
      const [features, logits] = expertFeaturesAndLogits(this.backbone, x);
      return this.router.loss(features, logits, target);
    });
  }

  /** The routed evaluation of a batch, with every expert's logits [E, N, C] beside it. */
  route(x: Tensor): RoutedOutput & { logits: Tensor } {
    return tidy(() => {
      const [features, logits] = expertFeaturesAndLogits(this.backbone, x);
      return { ...this.router.route(features, logits), logits };
    });
  }
}

/**
 * The routers' tensors of a RIDE-EA checkpoint written by RIDE's trainer (`expert_help_pred*`
 * under `prefix`, e.g. `state_dict.module.backbone.`), under the router's own names (hiddenFcs.i,
 * fc or fcs.i); null when the checkpoint holds none.
 */
export function referenceRouterState(
  source: Record<string, Tensor>,
  prefix: string,
): Record<string, Tensor> | null {
  const out: Record<string, Tensor> = {};
  const rename: [RegExp, string][] = [
    [/^expert_help_pred_hidden_fcs\.(\d+)\.(weight|bias)$/, 'hiddenFcs.$1.$2'],
    [/^expert_help_pred_fc\.(weight|bias)$/, 'fc.$1'],
    [/^expert_help_pred_fcs\.(\d+)\.(weight|bias)$/, 'fcs.$1.$2'],
  ];
  for (const [name, t] of Object.entries(source)) {
    if (!name.startsWith(prefix)) continue;
    const own = name.slice(prefix.length);
    for (const [re, to] of rename) if (re.test(own)) out[own.replace(re, to)] = t;
  }
  return Object.keys(out).length > 0 ? out : null;
}
