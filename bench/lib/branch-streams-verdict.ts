// Whether graph mode should run each expert (and each PRL draw) on a branch stream of its own,
// from what `npm run bench -- epoch-gpu` measured: the suite's BRANCH_STREAMS setting for the same
// GPU, decided from the figures alone, so that the next device call can start at once.
//
// Branch streams stay on (the default) unless:
// - graph mode with branch streams failed, or fell back to one stream (the reason is given);
// - under cuDNN's deterministic kernels (`--check`), branch streams and one stream, which run the
//   same kernels in the same order on each stream, differ in the weights by more than ten times
//   what two eager runs differ by (and more than 1e-4): that points to a missing wait between
//   streams, which makes results wrong, not just slow;
// - one stream is faster over the configs measured (the sum of their median epochs).

/** A difference between two trainings (epoch-gpu's `difference`), or a check that failed. */
interface Difference {
  max_weight?: number;
  max_loss?: number;
  error?: string;
}

/** One timed side of a config (epoch-gpu's `figure`), or its failure. */
interface Side {
  median_s?: number;
  streams?: boolean;
  error?: string;
}

/** The parts of epoch-gpu's JSON line the verdict reads. */
export interface EpochGpuFigures {
  check?: {
    deterministic?: Record<string, Difference | string | undefined> & { error?: string };
    error?: string;
  };
  [config: string]: unknown;
}

export interface BranchStreamsVerdict {
  /** The suite's BRANCH_STREAMS: `on` (the default) or `off`. */
  use: 'on' | 'off';
  why: string;
}

const STREAM_PAIRS = ['graph_one_stream_vs_graph', 'prl_graph_one_stream_vs_graph'] as const;

function sidesOf(figures: EpochGpuFigures): [string, Side, Side][] {
  const out: [string, Side, Side][] = [];
  for (const [name, entry] of Object.entries(figures)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const e = entry as Record<string, Side | undefined>;
    if (e.tailor_graph && e.tailor_graph_one_stream)
      out.push([name, e.tailor_graph, e.tailor_graph_one_stream]);
  }
  return out;
}

/** A wait missing between streams, as the deterministic check shows it, or null. */
function missingWait(figures: EpochGpuFigures): string | null {
  const det = figures.check?.deterministic;
  if (!det || det.error !== undefined) return null;
  const eager = det.eager_vs_eager as Difference | undefined;
  if (!eager || eager.max_weight === undefined) return null;
  const bound = Math.max(10 * eager.max_weight, 1e-4);
  for (const pair of STREAM_PAIRS) {
    const d = det[pair] as Difference | undefined;
    if (!d || d.max_weight === undefined) continue;
    if (!Number.isFinite(d.max_weight) || d.max_weight > bound)
      return (
        `under deterministic kernels ${pair} is ${d.max_weight} in the weights, eager against eager ` +
        `${eager.max_weight}: a wait between streams is missing`
      );
  }
  return null;
}

/** The verdict from epoch-gpu's figures (see the top of this file). */
export function branchStreamsVerdict(figures: EpochGpuFigures): BranchStreamsVerdict {
  const pairs = sidesOf(figures);
  for (const [name, streams] of pairs) {
    if (streams.error !== undefined)
      return { use: 'off', why: `${name}: graph mode with branch streams failed (${streams.error})` };
    if (streams.streams === false) return { use: 'off', why: `${name}: graph mode fell back to one stream` };
  }
  const wrong = missingWait(figures);
  if (wrong) return { use: 'off', why: wrong };
  const timed = pairs.filter(([, a, b]) => a.median_s !== undefined && b.median_s !== undefined);
  if (timed.length === 0) return { use: 'on', why: 'not timed: the default stays' };
  const withStreams = timed.reduce((s, [, a]) => s + a.median_s!, 0);
  const oneStream = timed.reduce((s, [, , b]) => s + b.median_s!, 0);
  const names = timed.map(([n]) => n).join(', ');
  const figure = `${withStreams.toFixed(3)} s against ${oneStream.toFixed(3)} s on one stream (${names})`;
  return withStreams <= oneStream
    ? { use: 'on', why: `branch streams are not slower: ${figure}` }
    : { use: 'off', why: `one stream is faster: branch streams take ${figure}` };
}
