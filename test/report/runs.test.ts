// Run discovery for `serve`: every kind of run directory is listed with its kind and a title.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listRuns } from '../../src/report/runs.js';
import { syntheticGmm, syntheticLongtail, writeAblationDir, writeRun } from './fixtures.js';

test('listRuns: long-tail, Gaussian and variational mixtures, nmr train runs and ablations, and a broken one', () => {
  const root = mkdtempSync(join(tmpdir(), 'tailor-runs-'));
  try {
    writeRun(join(root, 'a-longtail'), syntheticLongtail());
    const gmm = syntheticGmm().model;
    writeRun(join(root, 'b-gmm'), gmm);
    writeRun(join(root, 'c-bayes'), {
      ...gmm,
      bic: null,
      aic: null,
      bayesian: { weightConcentrationPriorType: 'dirichlet_process' },
    });
    mkdirSync(join(root, 'd-nmr'));
    writeFileSync(join(root, 'd-nmr', 'history.json'), '[]');
    writeFileSync(join(root, 'd-nmr', 'best.json'), '{}');
    writeRun(join(root, 'e-broken'), 'not a run');
    writeAblationDir(join(root, 'f-abl', 'ablation'));
    const runs = listRuns(root).map((r) => [r.id, r.kind, r.error ? 'error' : r.title]);
    assert.deepEqual(runs, [
      ['a-longtail', 'longtail', runs[0]![2]],
      ['b-gmm', 'gmm', 'GMM K = 2 (full)'],
      ['c-bayes', 'gmm', 'variational GMM K = 2 (full)'],
      ['d-nmr', 'nmr-train', 'NMR denoiser training'],
      ['e-broken', null, ''],
      ['f-abl/ablation', 'nmr-ablation', 'NMR training ablations'],
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
