// PRL preferences of a run: the controllability grid of a session, and the live query of
// `tailor serve` (the accuracy at one preference, with the test features cached per run).
import {
  PreferenceEvaluator,
  type ControllabilityGrid,
  type PreferenceResult,
} from '../adapt/controllability.js';
import type { PrlSystem } from '../systems/prl.js';
import { Preference } from '../types/preference.js';
import type { Session } from '../config/session.js';
import { loadRun } from './load.js';
import { checksOf } from '../../util/arguments.js';

/** A preference evaluator over the session's balanced test set (PRL sessions only). */
function preferenceEvaluator(session: Session): Promise<PreferenceEvaluator> {
  return PreferenceEvaluator.create(
    prlSystemOf(session),
    session.data.test,
    session.testTransform,
    session.data.trainCounts,
  );
}

/**
 * The accuracy of a PRL session's model over a grid of preferences (`steps` points per edge of the
 * simplex): how far the preference moves head and tail accuracy. Needs libtorch.
 */
export async function controllabilityGrid(session: Session, steps: number): Promise<ControllabilityGrid> {
  const evaluator = await preferenceEvaluator(session);
  try {
    return evaluator.grid(steps);
  } finally {
    evaluator.dispose();
  }
}

function prlSystemOf(session: Session): PrlSystem {
  if (session.system.kind !== 'prl')
    throw new Error('this run is not a PRL model (no hypernetwork): preferences do not apply');
  return session.system;
}

const evaluators = new Map<string, Promise<PreferenceEvaluator>>();

/**
 * For `tailor serve`: the accuracy of a run's PRL model at a preference (features cached per
 * run). A preference for another number of experts is a PreferenceError.
 */
export async function evaluatePreference(
  runDir: string,
  preference: Preference,
): Promise<Omit<PreferenceResult, 'preference'>> {
  const c = checksOf('evaluatePreference');
  c.string(runDir, 'runDir');
  if (!(preference instanceof Preference))
    c.fail('preference', 'a Preference (Preference.of([...]))', preference);
  let evaluator = evaluators.get(runDir);
  if (!evaluator) {
    evaluator = (async () => preferenceEvaluator(loadRun(runDir).session))();
    evaluators.set(runDir, evaluator);
    evaluator.catch(() => evaluators.delete(runDir));
  }
  const { preference: _p, ...rest } = (await evaluator).evaluate(preference);
  return rest;
}
