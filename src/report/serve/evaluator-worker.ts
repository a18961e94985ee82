// The thread of `tailor serve` that runs PRL models (serve/evaluator.ts starts it): it loads each
// run's model once, keeps its test features, and answers one preference at a time, so the tensor
// work never blocks the server's thread (pages and files stay fast while the model runs).
import { parentPort } from 'node:worker_threads';
import { Preference, evaluatePreference } from '../../longtail/index.js';
import { liveTensors } from '../../torch/index.js';
import type { EvaluatorReply, EvaluatorRequest } from './evaluator.js';

if (!parentPort) throw new Error('evaluator-worker runs as a worker thread of tailor serve');
const port = parentPort;

port.on('message', (m: EvaluatorRequest) => {
  if (m.kind === 'stats') {
    port.postMessage({ id: m.id, stats: { liveTensors: liveTensors() } } satisfies EvaluatorReply);
    return;
  }
  evaluatePreference(m.runDir, Preference.of(m.weights, m.weights.length)).then(
    (answer) => port.postMessage({ id: m.id, answer } satisfies EvaluatorReply),
    (error: unknown) =>
      port.postMessage({
        id: m.id,
        error: error instanceof Error ? error.message : String(error),
      } satisfies EvaluatorReply),
  );
});
