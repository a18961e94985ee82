// KL(p ‖ q) among the multivariate normals, full and low-rank (PyTorch 1.13's three pairs with
// LowRankMultivariateNormal): Woodbury through the capacitance matrices, as 1.13.
import type { Tensor } from '../tensor.js';
import * as aten from '../generated/aten.js';
import { broadcastShapes, type Distribution } from './distribution.js';
import { type MultivariateNormal, batchMahalanobis, halfLogDet } from './multivariate-normal.js';
import { type LowRankMultivariateNormal, lowRankLogDet, lowRankMahalanobis } from './low-rank-mvn.js';

/** Σ over the last two dims of x² (PyTorch's _batch_trace_XXT). */
const traceXXT = (x: Tensor): Tensor => x.square().sum([-2, -1]);

/** The same event size, or PyTorch's error, named. */
function sameEvent(who: string, p: Distribution, q: Distribution): void {
  if (p.eventShape[0] !== q.eventShape[0]) {
    throw new Error(
      `tailor: klDivergence(${who}): the event sizes differ (${p.eventShape[0]} and ${q.eventShape[0]})`,
    );
  }
}

/** KL between two low-rank multivariate normals (capacitance matrices, never n x n). */
export function klLowRankLowRank(p: LowRankMultivariateNormal, q: LowRankMultivariateNormal): Tensor {
  sameEvent('LowRankMultivariateNormal, LowRankMultivariateNormal', p, q);
  const [pW, pD, qW, qD] = [
    p.unbroadcastedCovFactor,
    p.unbroadcastedCovDiag,
    q.unbroadcastedCovFactor,
    q.unbroadcastedCovDiag,
  ];
  const term1 = lowRankLogDet(qD, q.capacitanceTril).sub(lowRankLogDet(pD, p.capacitanceTril));
  const term3 = lowRankMahalanobis(qW, qD, q.loc.sub(p.loc), q.capacitanceTril);
  // inv(qcov) pcov = [inv(qD) - Aᵀ A] (pD + pW pWᵀ) with A = inv(qC) qWᵀ inv(qD).
  const A = aten.linalg_solve_triangular(
    q.capacitanceTril,
    qW.transpose(-2, -1).div(qD.unsqueeze(-2)),
    false,
  );
  const term21 = pD.div(qD).sum(-1);
  const term22 = traceXXT(pW.mul(qD.rsqrt().unsqueeze(-1)));
  const term23 = traceXXT(A.mul(pD.sqrt().unsqueeze(-2)));
  const term24 = traceXXT(A.matmul(pW));
  const term2 = term21.add(term22).sub(term23).sub(term24);
  return term1.add(term2).add(term3).sub(p.eventShape[0]).mul(0.5);
}

/** KL from a multivariate normal to a low-rank one. */
export function klFullLowRank(p: MultivariateNormal, q: LowRankMultivariateNormal): Tensor {
  sameEvent('MultivariateNormal, LowRankMultivariateNormal', p, q);
  const [qW, qD, pL] = [q.unbroadcastedCovFactor, q.unbroadcastedCovDiag, p.unbroadcastedScaleTril];
  const term1 = lowRankLogDet(qD, q.capacitanceTril).sub(halfLogDet(pL).mul(2));
  const term3 = lowRankMahalanobis(qW, qD, q.loc.sub(p.loc), q.capacitanceTril);
  const A = aten.linalg_solve_triangular(
    q.capacitanceTril,
    qW.transpose(-2, -1).div(qD.unsqueeze(-2)),
    false,
  );
  const term21 = traceXXT(pL.mul(qD.rsqrt().unsqueeze(-1)));
  const term22 = traceXXT(A.matmul(pL));
  return term1.add(term21.sub(term22)).add(term3).sub(p.eventShape[0]).mul(0.5);
}

/** KL from a low-rank multivariate normal to a full one. */
export function klLowRankFull(p: LowRankMultivariateNormal, q: MultivariateNormal): Tensor {
  sameEvent('LowRankMultivariateNormal, MultivariateNormal', p, q);
  const [pW, pD, qL] = [p.unbroadcastedCovFactor, p.unbroadcastedCovDiag, q.unbroadcastedScaleTril];
  const term1 = halfLogDet(qL).mul(2).sub(lowRankLogDet(pD, p.capacitanceTril));
  const term3 = batchMahalanobis(qL, q.loc.sub(p.loc));
  const batch = broadcastShapes('klDivergence', qL.shape.slice(0, -2), pW.shape.slice(0, -2));
  const n = p.eventShape[0];
  const qLb = qL.expand(...batch, n, n);
  const pWb = pW.expand(...batch, n, pW.size(-1));
  const pDb = aten.diag_embed(pD.sqrt(), 0, -2, -1).expand(...batch, n, n);
  const term21 = traceXXT(aten.linalg_solve_triangular(qLb, pWb, false));
  const term22 = traceXXT(aten.linalg_solve_triangular(qLb, pDb, false));
  return term1.add(term21.add(term22)).add(term3).sub(n).mul(0.5);
}
