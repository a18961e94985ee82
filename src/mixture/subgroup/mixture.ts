// The latent-subgroup model as a BaseMixture (src/mixture/base.ts): the shared EM loop with
// restarts, the trace and the convergence test runs plain (unaccelerated) EM; a "sample" is a
// subject. The lower bound is the total log-likelihood (the reference cases and the absolute
// tolerance of reference/mixture.md are on that scale), not the per-subject mean.
import { BaseMixture, type BaseMixtureOptions, type EStepResult } from '../base.js';
import type { Rng } from '../../util/rng.js';
import type { SubgroupData } from './data.js';
import { type EmOptions, mStep } from './em.js';
import { quantileStart, randomStart } from './init.js';
import { type EStep, type SubgroupParams, cloneParams, eStep, parameterCount } from './model.js';
import { type SubjectStats, computeStats } from './stats.js';
import { MixtureArgumentError } from '../errors.js';

/** Where each start comes from: the quantile recipe, a random draw, or given values. */
export type StartSpec = 'quantile' | 'random' | SubgroupParams;

export interface SubgroupMixtureOptions extends Omit<BaseMixtureOptions, 'nInit'> {
  em: EmOptions;
  /** One entry per start, in order. */
  startPlan: StartSpec[];
}

export class SubgroupMixture extends BaseMixture<SubgroupData, SubgroupParams> {
  private params: SubgroupParams | null = null;
  private stats: SubjectStats | null = null;
  private startIndex = 0;
  /** The E step at the current parameters, reused by the M step that follows it. */
  private lastE: { params: SubgroupParams; e: EStep } | null = null;
  private readonly em: EmOptions;
  private readonly startPlan: StartSpec[];
  /** Total log-likelihood of each start, in plan order. */
  get startLogLiks(): number[] {
    return this.starts.map((s) => s.lowerBound);
  }

  constructor(options: SubgroupMixtureOptions) {
    super({ ...options, nInit: options.startPlan.length, tol: options.em.tol, maxIter: options.em.maxIter });
    this.em = options.em;
    this.startPlan = options.startPlan;
  }

  protected nSamples(data: SubgroupData): number {
    return data.nSubjects;
  }

  protected checkData(data: SubgroupData, _fitting: boolean): void {
    if (data.nSubjects === 0) throw new MixtureArgumentError('no subjects in the data');
  }

  protected override beginFit(_data: SubgroupData): void {
    this.startIndex = 0;
  }

  protected initialize(data: SubgroupData, rng: Rng): void {
    const spec = this.startPlan[this.startIndex++ % this.startPlan.length]!;
    const K = this.nComponents;
    if (spec === 'quantile') this.setParameters(quantileStart(data, K, this.em.correlation));
    else if (spec === 'random') this.setParameters(randomStart(data, K, this.em.correlation, rng));
    else this.setParameters(cloneParams(spec));
  }

  private currentStats(data: SubgroupData): SubjectStats {
    const params = this.requireParams();
    if (!this.stats || this.stats.phi !== params.phi)
      this.stats = computeStats(data, this.em.correlation, params.phi);
    return this.stats;
  }

  protected estimateWeightedLogProb(data: SubgroupData): Float64Array {
    // The E step of model.ts returns responsibilities; the base class wants log pi_ik + log f_ik,
    // which is log P_ik + l_i.
    const params = this.requireParams();
    const e = eStep(data, this.currentStats(data), params, this.nComponents);
    this.lastE = { params, e };
    const K = this.nComponents;
    const out = new Float64Array(e.resp.length);
    for (let i = 0; i < data.nSubjects; i++) {
      for (let k = 0; k < K; k++) out[i * K + k] = Math.log(e.resp[i * K + k]!) + e.perSubject[i]!;
    }
    return out;
  }

  protected mStep(data: SubgroupData, _resp: Float64Array): void {
    // The posterior moments of b_i come with the responsibilities from the same E step.
    const stats = this.currentStats(data);
    const params = this.requireParams();
    const e = this.lastE?.params === params ? this.lastE.e : eStep(data, stats, params, this.nComponents);
    const next = mStep(data, stats, params, e, this.nComponents, this.em);
    this.params = next.params;
    this.stats = next.stats;
  }

  protected override computeLowerBound(e: EStepResult, nSamples: number): number {
    return e.meanLogProbNorm * nSamples;
  }

  protected getParameters(): SubgroupParams {
    return cloneParams(this.requireParams());
  }

  protected setParameters(params: SubgroupParams): void {
    this.params = cloneParams(params);
    this.stats = null;
    this.markFitted();
  }

  nParameters(): number {
    const params = this.requireParams();
    return parameterCount(
      params.alpha.length,
      params.gamma.length / this.nComponents,
      this.nComponents,
      this.em.correlation === 'ar1',
    );
  }

  get parameters(): SubgroupParams {
    return this.getParameters();
  }

  private requireParams(): SubgroupParams {
    if (!this.params)
      throw new MixtureArgumentError('the subgroup mixture has no parameters yet: call fit() first');
    return this.params;
  }
}
