// bench/lib/branch-streams-verdict.ts: the suite's BRANCH_STREAMS from epoch-gpu's figures. Each rule
// is met by a made-up figure set: faster on streams, slower, a failed or fallen-back capture, a
// deterministic check showing a missing wait (and one within eager's spread), nothing timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { branchStreamsVerdict, type EpochGpuFigures } from '../../bench/lib/branch-streams-verdict.js';

function figures(
  sade: [number, number],
  prl: [number, number],
  check?: EpochGpuFigures['check'],
): EpochGpuFigures {
  const side = (median_s: number, streams: boolean) => ({ mode: 'graph', streams, median_s });
  return {
    device: 'cuda',
    ...(check ? { check } : {}),
    sade: { images: 14866, tailor_graph: side(sade[0], true), tailor_graph_one_stream: side(sade[1], false) },
    prl: { images: 14866, tailor_graph: side(prl[0], true), tailor_graph_one_stream: side(prl[1], false) },
  };
}

const deterministic = (eager: number, sade: number, prl: number) => ({
  deterministic: {
    eager_vs_eager: { max_weight: eager, max_loss: 0 },
    graph_vs_eager: { max_weight: 1e-6, max_loss: 0 },
    graph_one_stream_vs_graph: { max_weight: sade, max_loss: 0 },
    prl_graph_one_stream_vs_graph: { max_weight: prl, max_loss: 0 },
  },
});

test('branch streams stay on when they are not slower over both configs', () => {
  // SADE a little slower on streams, PRL much faster: the sum decides
  const v = branchStreamsVerdict(figures([1.32, 1.31], [1.2, 1.64], deterministic(0, 0, 0)));
  assert.equal(v.use, 'on');
  assert.match(v.why, /not slower: 2\.520 s against 2\.950 s on one stream \(sade, prl\)/);
});

test('one stream faster: off, with both sums', () => {
  const v = branchStreamsVerdict(figures([1.4, 1.31], [1.7, 1.64]));
  assert.deepEqual(v, {
    use: 'off',
    why: 'one stream is faster: branch streams take 3.100 s against 2.950 s on one stream (sade, prl)',
  });
});

test('a missing wait under deterministic kernels turns streams off even when they are faster', () => {
  const v = branchStreamsVerdict(figures([1.0, 1.31], [1.2, 1.64], deterministic(1e-6, 1e-6, 0.03)));
  assert.equal(v.use, 'off');
  assert.match(v.why, /prl_graph_one_stream_vs_graph is 0\.03 in the weights, eager against eager 0.000001/);
  assert.equal(branchStreamsVerdict(figures([1.0, 1.31], [1.2, 1.64], deterministic(0, NaN, 0))).use, 'off');
  // within ten times eager's own spread, or under 1e-4: the same arithmetic, the timing decides
  assert.equal(
    branchStreamsVerdict(figures([1.0, 1.31], [1.2, 1.64], deterministic(2e-3, 1e-2, 5e-5))).use,
    'on',
  );
  // a deterministic check that failed says nothing about waits
  const failed = { deterministic: { error: 'cuDNN has no deterministic kernel' } };
  assert.equal(branchStreamsVerdict(figures([1.0, 1.31], [1.2, 1.64], failed)).use, 'on');
});

test('a failed or fallen-back branch-stream capture turns streams off, naming it', () => {
  const failed = figures([1, 1], [1, 1]);
  (failed.prl as Record<string, unknown>).tailor_graph = {
    error: 'operation not permitted when stream is capturing',
  };
  assert.deepEqual(branchStreamsVerdict(failed), {
    use: 'off',
    why: 'prl: graph mode with branch streams failed (operation not permitted when stream is capturing)',
  });
  const fellBack = figures([1, 1.2], [1, 1.2]);
  ((fellBack.sade as Record<string, unknown>).tailor_graph as { streams: boolean }).streams = false;
  assert.deepEqual(branchStreamsVerdict(fellBack), {
    use: 'off',
    why: 'sade: graph mode fell back to one stream',
  });
});

test('nothing timed: the default stays on', () => {
  assert.deepEqual(
    branchStreamsVerdict({ device: 'cuda', sade: { images: 10, tailor_eager: { median_s: 5 } } }),
    {
      use: 'on',
      why: 'not timed: the default stays',
    },
  );
});
