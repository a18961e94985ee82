// Starting a multi-expert model from pretrained weights, as SADE's Places-LT recipe starts its
// ResNet-152 from ImageNet-pretrained weights: the shared trunk takes the checkpoint's stem and
// stages, every expert takes its own copy of the checkpoint's later stages (layer3 / layer4 of a
// single model go to experts.N.layer3 / experts.N.layer4), and the classifiers keep their fresh
// initialisation (the pretrained model's classes are not these). A checkpoint of the same
// multi-expert layout loads name for name, and so does one of the SADE / RIDE / BalPoE multi-expert
// layout (layer3s.N / layer4s.N, expert for expert). Wrapper prefixes of the usual checkpoint layouts
// (`module.` of DataParallel, `state_dict.`, `model.`, `state_dict_best.feat_model.` of the
// decoupling code SADE's weights come from) are found by trying them.
import { dispose, noGrad, type Tensor } from '../../torch/index.js';
import { InputError } from '../../util/errors.js';
import type { MultiExpertModel } from './multi-expert.js';

/** Weights that cannot initialise the model: a missing stage, a shape that differs, no tensors. */
export class PretrainedWeightsError extends InputError {}

const WRAPPERS = [
  '',
  'module.',
  'state_dict.',
  'state_dict.module.',
  'model.',
  'model.module.',
  // SADE / RIDE / BalPoE trainers: model/model.py's Model keeps the network under 'backbone.'.
  'backbone.',
  'module.backbone.',
  'state_dict.backbone.',
  'state_dict.module.backbone.',
  'state_dict_best.feat_model.',
  'state_dict_best.feat_model.module.',
  'feat_model.',
  'feat_model.module.',
];

/** What was taken from a checkpoint, for the run's log. */
export interface PretrainedReport {
  /** The wrapper prefix the checkpoint's names carried ('' for none). */
  prefix: string;
  /** Model tensors set from the checkpoint (parameters and batch-norm statistics). */
  loaded: number;
  /** Of those, the expert tensors filled from a single model's stage (layer3 / layer4 copies). */
  copiedIntoExperts: number;
  /** Model tensors left as initialised: the classifiers, and counters the checkpoint lacks. */
  kept: string[];
  /** Checkpoint tensors that matched nothing (a pretrained model's fc, for one). */
  unused: string[];
}

const isClassifier = (name: string): boolean => /(^|\.)classifier\./.test(name);

/** The checkpoint name each model tensor reads, for one wrapper prefix (undefined: none). */
function sourceOf(target: string, prefix: string, source: Record<string, Tensor>): string | undefined {
  const direct = prefix + target;
  if (direct in source) return direct;
  // experts.N.layer3.x of the model from layer3.x of a single model
  const single = target.replace(/^experts\.\d+\./, '');
  if (single !== target && prefix + single in source) return prefix + single;
  // ... or from layer3s.N.x of a SADE / RIDE / BalPoE multi-expert model
  const reference = target.replace(/^experts\.(\d+)\.(layer\d)\./, '$2s.$1.');
  if (reference !== target && prefix + reference in source) return prefix + reference;
  return undefined;
}

/**
 * The model tensor -> checkpoint tensor map, choosing the wrapper prefix that resolves the most
 * names. Throws PretrainedWeightsError naming the first missing tensors when a backbone tensor
 * (anything but a classifier or a batch-norm counter) has no source, or a shape differs.
 */
export function pretrainedMapping(
  model: MultiExpertModel,
  source: Record<string, Tensor>,
  file: string,
): { mapping: Map<string, string>; report: PretrainedReport } {
  const own = model.stateDict();
  const targets = Object.keys(own).filter((name) => !isClassifier(name));
  if (Object.keys(source).length === 0) throw new PretrainedWeightsError(`${file}: holds no tensors`);
  let best = { prefix: '', resolved: -1 };
  for (const prefix of WRAPPERS) {
    const resolved = targets.filter((t) => sourceOf(t, prefix, source) !== undefined).length;
    if (resolved > best.resolved) best = { prefix, resolved };
  }
  const mapping = new Map<string, string>();
  const missing: string[] = [];
  const kept = Object.keys(own).filter(isClassifier);
  for (const target of targets) {
    const name = sourceOf(target, best.prefix, source);
    if (name === undefined) {
      if (target.endsWith('num_batches_tracked')) kept.push(target);
      else missing.push(target);
      continue;
    }
    const want = own[target]!.shape;
    const got = source[name]!.shape;
    if (want.length !== got.length || want.some((d, i) => d !== got[i])) {
      throw new PretrainedWeightsError(
        `${file}: '${name}' has shape [${got.join(', ')}] but the model's '${target}' is [${want.join(', ')}]; ` +
          'the weights must come from the same architecture (arch.type) and stage widths (reduce_dimension, layer3_output_dim, layer4_output_dim)',
      );
    }
    mapping.set(target, name);
  }
  if (missing.length > 0) {
    throw new PretrainedWeightsError(
      `${file}: no weights for ${missing.length} of the model's ${targets.length} backbone tensors ` +
        `(${missing.slice(0, 4).join(', ')}${missing.length > 4 ? ', ...' : ''}); ` +
        'give a checkpoint of the same architecture (a single model with conv1, bn1, layer1-layer4, this multi-expert layout, or a SADE/RIDE/BalPoE one with layer3s/layer4s)',
    );
  }
  const used = new Set(mapping.values());
  const unused = Object.keys(source).filter((name) => !used.has(name));
  const copiedIntoExperts = [...mapping].filter(([target, name]) => {
    const local = name.slice(best.prefix.length);
    return target !== local && local === target.replace(/^experts\.\d+\./, '');
  }).length;
  return {
    mapping,
    report: { prefix: best.prefix, loaded: mapping.size, copiedIntoExperts, kept, unused },
  };
}

/**
 * Sets the model's backbone from `source` (a state dict read from `file`, named in errors) and
 * returns what was taken. The classifiers keep their initialisation. The source tensors are not
 * disposed here.
 */
export function loadPretrained(
  model: MultiExpertModel,
  source: Record<string, Tensor>,
  file: string,
): PretrainedReport {
  const { mapping, report } = pretrainedMapping(model, source, file);
  const own = model.stateDict();
  noGrad(() => {
    for (const [target, name] of mapping) own[target]!.copy_(source[name]!);
  });
  return report;
}

/** {@link loadPretrained} from a file (read with `read`), disposing what it read. */
export function loadPretrainedFile(
  model: MultiExpertModel,
  file: string,
  read: (file: string) => Record<string, Tensor>,
): PretrainedReport {
  const source = read(file);
  try {
    return loadPretrained(model, source, file);
  } finally {
    dispose(Object.values(source));
  }
}
