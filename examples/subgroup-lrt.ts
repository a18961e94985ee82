// The latent-subgroup mixed model on longitudinal data (examples/subgroup_s1.csv: 500 subjects,
// 5 visits, 3 simulated classes) and the likelihood-ratio test of a membership covariate.
// Needs no libtorch: runs with TAILOR_NO_ENGINE=1. Usage: subgroup-lrt [file.csv]
import { fileURLToPath } from 'node:url';
import { fitSubgroup, membershipLrt, readSubgroupCsv } from 'tailor/mixture';

const file = process.argv[2] ?? fileURLToPath(new URL('./subgroup_s1.csv', import.meta.url));
const data = readSubgroupCsv(file, {
  id: 'id',
  time: 'time',
  y: 'y',
  fixed: ['W1', 'W2', 'W3'],
  membership: ['U1', 'U2'],
});
console.log(`${data.nSubjects} subjects, ${data.nObs} visits`);

const options = { K: 3, starts: 4, seed: 1 };
const fit = fitSubgroup(data, options);
console.log(`K=3: log-likelihood ${fit.logLik.toFixed(2)}, BIC ${fit.bic.toFixed(2)}`);
console.log(`class means: ${Array.from(fit.params.mu, (m) => m.toFixed(2)).join(', ')}`);

// Does U2 predict class membership? Fit with and without it and compare.
const lrt = membershipLrt(data, ['U2'], options);
console.log(`LRT for U2: LR = ${lrt.lr.toFixed(2)} on ${lrt.df} df, p = ${lrt.pValue.toExponential(2)}`);
for (const w of lrt.warnings) console.log(`warning: ${w}`);
