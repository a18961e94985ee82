// The page of a `tailor predict` output: the input's estimated class prior against the training
// prior, the confidence histogram, and a grid of the most confident images of each predicted
// class (thumbnails embedded as data URIs, so the page stays one offline file under the reports'
// content security policy).
import { existsSync } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { InputError } from '../util/errors.js';
import { parseResultsJson } from './read.js';
import { Fields, type Json } from './validate.js';
import { chartDiv, escapeHtml, note, num, pct, section, table } from './html.js';
import type { ReportPage } from './types.js';

/** Classes whose thumbnails the page shows (the most predicted first): a page stays megabytes. */
export const MAX_THUMBNAIL_CLASSES = 50;
/** Thumbnails per class. */
const THUMBNAILS_PER_CLASS = 8;
const THUMBNAIL_PIXELS = 64;

/** A `tailor predict` summary as the page reads it (checked field by field). */
export interface PredictionSummary {
  run: string;
  input: string;
  inputRoot: string | null;
  inputKind: string;
  output: string;
  n: number;
  mode: string;
  classes: number;
  classNames: string[];
  trainingPrior: number[];
  estimatedPrior: number[];
  counts: number[];
  confidence: number[];
  examples: { path?: string; index?: number; probability: number }[][];
  chosen: Json;
  calibration: string;
  converted: number;
  skipped: number;
  streamed: boolean;
  seconds: number;
}

/** The summary file of a prediction output: FILE.summary.json beside FILE (or FILE itself). */
export function predictionSummaryPath(file: string): string {
  return file.endsWith('.summary.json') ? file : `${file}.summary.json`;
}

/** Reads and checks a prediction summary; errors name the file and the field. */
export function readPredictionSummary(file: string): PredictionSummary {
  const path = predictionSummaryPath(file);
  if (!existsSync(path))
    throw new InputError(
      `${path}: no such file; 'tailor predict --out FILE' writes FILE.summary.json beside FILE`,
    );
  const f = new Fields(path, "the summary 'tailor predict' writes");
  const s = f.object(parseResultsJson(path), '');
  if (s.kind !== 'predictions') f.fail('kind', `is ${JSON.stringify(s.kind)}, not "predictions"`);
  const classes = f.number(s.classes, 'classes', { integer: true, min: 1, max: 1_000_000 });
  const perClass = (v: unknown, field: string) => {
    const values = f.numbers(v, field, { min: 0 });
    if (values.length !== classes) f.fail(field, `has ${values.length} entries for ${classes} classes`);
    return values;
  };
  const names = s.class_names === undefined ? null : f.strings(s.class_names, 'class_names');
  if (names && names.length !== classes)
    f.fail('class_names', `has ${names.length} names for ${classes} classes`);
  const countsRecord = f.object(s.predicted_counts, 'predicted_counts');
  const classNames = names ?? Array.from({ length: classes }, (_, c) => String(c));
  const histogram = f.object(s.confidence_histogram, 'confidence_histogram');
  const examples = f.array(s.examples, 'examples', classes);
  const calibration = f.object(s.calibration, 'calibration');
  return {
    run: f.string(s.run, 'run'),
    input: f.string(s.input, 'input'),
    inputRoot: s.input_root === undefined ? null : f.string(s.input_root, 'input_root'),
    inputKind: f.string(s.input_kind, 'input_kind'),
    output: f.string(s.output, 'output'),
    n: f.number(s.n, 'n', { integer: true, min: 0 }),
    mode: f.string(s.mode, 'mode'),
    classes,
    classNames,
    trainingPrior: perClass(s.training_prior, 'training_prior'),
    estimatedPrior: perClass(s.estimated_prior, 'estimated_prior'),
    counts: classNames.map((name) =>
      f.number(countsRecord[name] ?? 0, `predicted_counts.${name}`, { integer: true, min: 0 }),
    ),
    confidence: f.numbers(histogram.counts, 'confidence_histogram.counts', { integer: true, min: 0 }),
    examples: examples.map((list, c) =>
      f.array(list, `examples[${c}]`, THUMBNAILS_PER_CLASS * 4).map((e, k) => {
        const field = `examples[${c}][${k}]`;
        const o = f.object(e, field);
        return {
          ...(o.path !== undefined ? { path: f.string(o.path, `${field}.path`) } : {}),
          ...(o.index !== undefined
            ? { index: f.number(o.index, `${field}.index`, { integer: true, min: 0 }) }
            : {}),
          probability: f.number(o.probability, `${field}.probability`, { min: 0, max: 1 }),
        };
      }),
    ),
    chosen: f.object(s.chosen, 'chosen'),
    calibration: f.string(calibration.kind, 'calibration.kind'),
    converted: f.number(s.converted, 'converted', { integer: true, min: 0 }),
    skipped: f.number(s.skipped, 'skipped', { integer: true, min: 0 }),
    streamed: s.streamed === undefined ? false : f.boolean(s.streamed, 'streamed'),
    seconds: f.number(s.seconds, 'seconds', { min: 0 }),
  };
}

/** An image path of the summary inside its input root, or null (absolute or leading out). */
function insideRoot(root: string, path: string): string | null {
  if (isAbsolute(path)) return null;
  const p = normalize(path);
  if (p === '..' || p.startsWith(`..${sep}`)) return null;
  return join(root, p);
}

/** A PNG data URI of the image, at most THUMBNAIL_PIXELS on its longer side; null if unreadable. */
async function thumbnail(file: string): Promise<string | null> {
  const sharp = (await import('sharp')).default;
  try {
    const png = await sharp(file, { failOn: 'error', limitInputPixels: 100_000_000 })
      .resize(THUMBNAIL_PIXELS, THUMBNAIL_PIXELS, {
        fit: 'inside',
        kernel: 'nearest',
        withoutEnlargement: false,
      })
      .png()
      .toBuffer();
    return `data:image/png;base64,${png.toString('base64')}`;
  } catch {
    return null;
  }
}

/** The grid of the most confident images per predicted class, the most predicted classes first. */
async function examplesSection(s: PredictionSummary): Promise<string> {
  if (!s.inputRoot || s.examples.every((list) => list.every((e) => e.path === undefined)))
    return section(
      'Most confident images per class',
      note(`The input (${s.inputKind}) has no image files to show; the rows give each image's index.`),
      'examples',
    );
  const order = s.counts
    .map((count, c) => ({ count, c }))
    .filter((e) => e.count > 0)
    .sort((a, b) => b.count - a.count || a.c - b.c);
  let missing = 0;
  const blocks: string[] = [];
  for (const { c, count } of order.slice(0, MAX_THUMBNAIL_CLASSES)) {
    const images: string[] = [];
    for (const e of s.examples[c]!.slice(0, THUMBNAILS_PER_CLASS)) {
      const file = e.path === undefined ? null : insideRoot(s.inputRoot, e.path);
      const uri = file ? await thumbnail(file) : null;
      if (!uri) {
        missing++;
        continue;
      }
      const caption = `${e.path} (${pct(e.probability)} %)`;
      images.push(
        `<figure class="thumb"><img src="${escapeHtml(uri)}" alt="${escapeHtml(e.path)}" title="${escapeHtml(caption)}"><figcaption>${pct(e.probability)} %</figcaption></figure>`,
      );
    }
    blocks.push(
      `<div class="thumb-class"><h3>${escapeHtml(s.classNames[c])} <small>(${count} predicted)</small></h3><div class="thumbs">${images.join('')}</div></div>`,
    );
  }
  const notes = [
    order.length > MAX_THUMBNAIL_CLASSES
      ? note(`The ${MAX_THUMBNAIL_CLASSES} most predicted of ${order.length} classes are shown.`)
      : '',
    missing > 0 ? note(`${missing} image(s) could not be read from ${s.inputRoot} and are not shown.`) : '',
  ];
  const style = `<style>.thumbs{display:flex;flex-wrap:wrap;gap:6px}.thumb{margin:0;text-align:center}.thumb img{image-rendering:pixelated;border:1px solid #ddd;max-width:${THUMBNAIL_PIXELS}px}.thumb figcaption{font-size:11px}.thumb-class h3{font-size:15px;margin:12px 0 4px}</style>`;
  return section('Most confident images per class', style + notes.join('') + blocks.join('\n'), 'examples');
}

/** The report page of a `tailor predict` output (its summary beside it). */
export async function predictionsPage(file: string): Promise<ReportPage> {
  const s = readPredictionSummary(file);
  const x = s.classNames.map((_, c) => c);
  const chosen = Object.entries(s.chosen)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.map((w) => num(Number(w), 3)).join(', ') : String(v)}`)
    .join('; ');
  const overview = table(
    ['', 'value'],
    [
      ['run', s.run],
      ['input', `${s.input} (${s.inputKind}${s.streamed ? ', streamed' : ''})`],
      ['images', s.n],
      ['adaptation', s.mode],
      ['chosen', chosen || '–'],
      ['calibration', s.calibration],
      ['converted / skipped', `${s.converted} / ${s.skipped}`],
      ['seconds', num(s.seconds, 1)],
    ],
  );
  const priorRows = s.classNames.map((name, c) => [
    name,
    pct(s.trainingPrior[c]),
    pct(s.estimatedPrior[c]),
    s.counts[c]!,
    pct(s.n > 0 ? s.counts[c]! / s.n : null),
  ]);
  const bins = s.confidence.length;
  return {
    title: `Predictions: ${s.output}`,
    kind: 'predictions',
    subtitle: `${s.n} images, ${s.classes} classes, adaptation ${s.mode}`,
    sections: [
      section('Overview', overview, 'overview'),
      section(
        'Class prior of the input',
        chartDiv(
          'prior',
          'Training prior against the prior estimated on the input (EM on calibrated scores).',
        ) + table(['class', 'training prior %', 'estimated prior %', 'predicted', 'predicted %'], priorRows),
        'prior',
      ),
      section('Confidence', chartDiv('confidence', 'Images per bin of the top-1 probability.'), 'confidence'),
      await examplesSection(s),
    ],
    charts: {
      prior: {
        type: 'lines',
        x,
        ...(s.classes <= 60 ? { xTicks: s.classNames } : {}),
        xLabel: 'class',
        yLabel: 'share of images',
        integerX: true,
        series: [
          { label: 'training prior', values: s.trainingPrior, dash: true },
          { label: 'estimated prior (input)', values: s.estimatedPrior, points: true },
          { label: 'predicted share', values: s.counts.map((v) => (s.n > 0 ? v / s.n : null)), points: true },
        ],
      },
      confidence: {
        type: 'lines',
        x: s.confidence.map((_, k) => (k + 0.5) / bins),
        xLabel: 'top-1 probability',
        yLabel: 'images',
        zoom: false,
        series: [{ label: 'images', values: s.confidence, points: true }],
      },
    },
  };
}
