// What `tailor predict` writes: the per-image rows (top-k classes with probabilities) in CSV, JSON
// or JSON Lines, and the figures of its summary that the prediction report draws (counts per
// predicted class, the confidence histogram, the most confident images of each class).

/** The output formats, by extension. */
export const FORMATS = ['.csv', '.json', '.jsonl'] as const;
export type Format = (typeof FORMATS)[number];

/** One image's prediction. */
export interface Row {
  path?: string;
  index?: number;
  top: { class: string | number; index: number; probability: number }[];
}

/** Bins of the top-1 probability histogram, over [0, 1]. */
export const CONFIDENCE_BINS = 20;
/** Images per predicted class kept in the summary for the report's thumbnails. */
export const EXAMPLES_PER_CLASS = 8;

/** The per-image rows and the summary's figures of an n x classes probability matrix. */
export interface PredictionTable {
  rows: Row[];
  /** Images per predicted (top-1) class. */
  counts: number[];
  /** Counts of the top-1 probability in CONFIDENCE_BINS equal bins over [0, 1]. */
  confidence: number[];
  /** Per class, the most confident images predicted as it (path or index, probability). */
  examples: { path?: string; index?: number; probability: number }[][];
}

/**
 * The rows of the images not in `leftOut`, with the top `topK` classes of each. `paths[i]` is the
 * image's path, or null where the input has none (idx/CIFAR: the row carries its index).
 */
export function predictionTable(
  probabilities: Float64Array,
  classes: number,
  paths: readonly (string | null)[],
  topK: number,
  name: (c: number) => string | number,
  leftOut: ReadonlySet<number> = new Set(),
): PredictionTable {
  const counts = new Array<number>(classes).fill(0);
  const confidence = new Array<number>(CONFIDENCE_BINS).fill(0);
  const examples: PredictionTable['examples'] = Array.from({ length: classes }, () => []);
  const rows: Row[] = [];
  const order = Array.from({ length: classes }, (_, c) => c);
  for (let i = 0; i < paths.length; i++) {
    if (leftOut.has(i)) continue;
    const p = probabilities.subarray(i * classes, (i + 1) * classes);
    order.sort((a, b) => p[b]! - p[a]! || a - b);
    const best = order[0]!;
    counts[best]!++;
    confidence[Math.min(CONFIDENCE_BINS - 1, Math.floor(p[best]! * CONFIDENCE_BINS))]!++;
    const where = paths[i] === null ? { index: i } : { path: paths[i]! };
    keepMostConfident(examples[best]!, { ...where, probability: p[best]! });
    rows.push({
      ...where,
      top: order.slice(0, topK).map((c) => ({ class: name(c), index: c, probability: p[c]! })),
    });
  }
  return { rows, counts, confidence, examples };
}

/** Keeps the EXAMPLES_PER_CLASS most confident entries, most confident first. */
function keepMostConfident(list: { probability: number }[], entry: { probability: number }): void {
  if (list.length === EXAMPLES_PER_CLASS && entry.probability <= list.at(-1)!.probability) return;
  let k = list.length;
  while (k > 0 && list[k - 1]!.probability < entry.probability) k--;
  list.splice(k, 0, entry);
  if (list.length > EXAMPLES_PER_CLASS) list.pop();
}

/** The rows as the output file's text in `format`. */
export function formatRows(rows: Row[], format: Format, topK: number): string {
  if (format === '.json') return `${JSON.stringify(rows, null, 1)}\n`;
  if (format === '.jsonl') return rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
  const header = [
    rows[0]?.path !== undefined ? 'path' : 'index',
    ...Array.from({ length: topK }, (_, k) => [`class_${k + 1}`, `probability_${k + 1}`]).flat(),
  ];
  const cell = (v: string | number) => {
    const s = String(v);
    return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = rows.map((r) =>
    [r.path ?? r.index!, ...r.top.flatMap((t) => [t.class, t.probability])].map(cell).join(','),
  );
  return [header.join(','), ...lines].join('\n') + '\n';
}
