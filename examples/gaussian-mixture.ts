// Fit Gaussian mixtures to in-memory points and choose the number of components by BIC, then let
// a variational mixture's Dirichlet-process prior choose it. Needs no libtorch: runs with
// TAILOR_NO_ENGINE=1.
import { BayesianGaussianMixture, GaussianMixture, fromRows, selectByBic } from 'tailor/mixture';

// Three 2-D clusters, 100 points each, from a small seeded generator.
let state = 12345;
const uniform = () => ((state = (state * 1103515245 + 12345) % 2147483648) + 0.5) / 2147483648;
const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
const centres = [
  [0, 0],
  [5, 5],
  [0, 6],
];
const points: number[][] = [];
for (const [cx, cy] of centres) for (let i = 0; i < 100; i++) points.push([cx! + normal(), cy! + normal()]);
const x = fromRows(points);

// Every (K, covariance type) pair; lower BIC is better.
const { best } = selectByBic(x, { ks: [1, 2, 3, 4, 5], covarianceTypes: ['full', 'diag'], seed: 0 });
if (!best) throw new Error('no fit succeeded');
console.log(`best by BIC: K=${best.k} ${best.covarianceType} (BIC ${best.bic.toFixed(1)})`);

const gm = new GaussianMixture({ nComponents: best.k, covarianceType: best.covarianceType, seed: 0 }).fit(x);
const labels = gm.predict(x);
for (let k = 0; k < best.k; k++) {
  const mean = Array.from(gm.means.subarray(k * 2, k * 2 + 2), (v) => v.toFixed(2)).join(', ');
  const size = labels.filter((l) => l === k).length;
  console.log(`component ${k}: weight ${gm.weights[k]!.toFixed(3)}, mean (${mean}), ${size} points`);
}

// The variational mixture with a generous K: the prior leaves the components it does not need
// with weights near zero.
const bgm = new BayesianGaussianMixture({ nComponents: 8, weightConcentrationPrior: 0.01, seed: 0 }).fit(x);
const used = Array.from(bgm.weights).filter((w) => w >= 0.01).length;
console.log(`variational mixture: ${used} of 8 components hold >= 1% of the weight`);
