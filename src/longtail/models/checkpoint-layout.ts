// Loading a whole trained model (trunk, experts and classifiers) from a weights file whose names
// follow one of the layouts tailor knows, recognised by trying them all:
// - tailor's own (conv1, layer1, experts.N.layer2 / layer3 / layer4, experts.N.classifier);
// - the multi-expert ResNets of SADE, RIDE and BalPoE (model/ldam_drw_resnets/*expert* and
//   ride_resnet_cifar.py, model/fb_resnets/Expert_* and RIDEResNe*.py): per-expert stages in
//   ModuleLists layer2s.N / layer3s.N / layer4s.N and classifiers linears.N;
// - their single models (resnet_cifar.py, ResNet.py, ResNeXt.py): layer2 / layer3 / layer4 and a
//   classifier named linear, for a one-expert model.
// Their trainers save {'state_dict', 'optimizer', 'config', ...} with the network under
// 'backbone.' (model/model.py's Model) and, after DataParallel, 'module.'; those wrappers are
// found by trying them. The two forms of a classifier store the same tensors: a cosine
// classifier's weight [features, classes] (NormedLinear, scale s outside it), a linear one's
// weight [classes, features] and bias.
import { noGrad, type Tensor } from '../../torch/index.js';
import { InputError } from '../../util/errors.js';
import type { MultiExpertModel } from './multi-expert.js';

/** Weights that cannot become this model: names of no known layout, or another shape. */
export class CheckpointLayoutError extends InputError {}

/** The name layouts a weights file is read in (tried in turn, the best fit kept). */
export type CheckpointLayout = 'tailor' | 'reference-experts' | 'reference-single';

/** What each layout is, for the log line. */
export const LAYOUT_DESCRIPTIONS: Record<CheckpointLayout, string> = {
  tailor: "tailor's multi-expert layout (experts.N.*)",
  'reference-experts': 'SADE/RIDE/BalPoE multi-expert layout (layer2s/layer3s/layer4s.N, linears.N)',
  'reference-single': 'SADE/RIDE/BalPoE single-model layout (layer2/layer3/layer4, linear)',
};

/** What was taken from a weights file: its layout and wrapper prefix, the tensors loaded. */
export interface ModelWeightsReport {
  layout: CheckpointLayout;
  /** The wrapper prefix the names carried ('' for none; e.g. 'state_dict.module.backbone.'). */
  prefix: string;
  /** Model tensors set from the file. */
  loaded: number;
  /** Checkpoint tensors under the prefix left unused: RIDE's expert-assignment router (expert_help_pred*). */
  ignored: string[];
}

// Outer container (a trainer's checkpoint dict), DataParallel, model/model.py's Model wrapper.
const PREFIXES = ['', 'state_dict.', 'model.'].flatMap((outer) =>
  ['', 'module.'].flatMap((dp) => ['', 'backbone.'].map((bb) => outer + dp + bb)),
);

/** RIDE's EA models route samples between experts; tailor evaluates every expert. */
const IGNORABLE = /^expert_help_pred/;

/** The name a model tensor has in a layout (undefined: the layout has no such tensor). */
function nameIn(layout: CheckpointLayout, target: string, experts: number): string | undefined {
  if (layout === 'tailor') return target;
  const m = /^experts\.(\d+)\.(layer\d|classifier)\.(.*)$/.exec(target);
  if (!m) return target;
  const [, e, part, rest] = m;
  if (layout === 'reference-experts') return `${part === 'classifier' ? 'linears' : `${part}s`}.${e}.${rest}`;
  return experts === 1 ? `${part === 'classifier' ? 'linear' : part}.${rest}` : undefined;
}

/**
 * The expert count the names hold, whatever layout fits best (a single model's classifier
 * 'linear' is one expert), so that a file of another count is named as such.
 */
function expertsIn(names: string[]): number | undefined {
  for (const pattern of [/^experts\.(\d+)\./, /^(?:linears|layer\ds)\.(\d+)\./]) {
    const ids = new Set(names.map((n) => pattern.exec(n)?.[1]).filter((v) => v !== undefined));
    if (ids.size > 0) return ids.size;
  }
  return names.some((n) => n.startsWith('linear.')) ? 1 : undefined;
}

const few = (names: string[]): string =>
  names
    .slice(0, 4)
    .map((n) => `'${n}'`)
    .join(', ') + (names.length > 4 ? `, ... (${names.length} in all)` : '');

/** Why a classifier tensor's shape differs: the classifier kind, or the class count. */
function classifierHint(
  arch: string,
  target: string,
  normed: boolean,
  want: number[],
  got: number[],
): string {
  // A cosine classifier's weight is [features, classes], a linear one's [classes, features].
  if (target.endsWith('.weight') && got.length === 2 && want[0] === got[1] && want[1] === got[0]) {
    return `the checkpoint has ${normed ? 'a linear' : 'a cosine'} classifier: set ${arch}.args.use_norm to ${!normed}`;
  }
  const classes = got.length === 2 ? got[normed ? 1 : 0] : got[0];
  return `the checkpoint's classifier has ${classes} classes: set ${arch}.args.num_classes (and the data set) to match`;
}

/**
 * The model tensor -> checkpoint tensor map for the layout and wrapper prefix that name the most
 * model tensors. Throws {@link CheckpointLayoutError} (naming `file`, a few of the missing or
 * unexpected names and the field of the config section `arch` to change) when no layout fits, the expert count differs,
 * a tensor has another shape, or checkpoint tensors under the prefix have no place in the model.
 */
export function modelWeightsMapping(
  model: MultiExpertModel,
  source: Record<string, Tensor>,
  file: string,
  arch = 'arch',
): { mapping: Map<string, string>; report: ModelWeightsReport } {
  const own = model.stateDict();
  const targets = Object.keys(own);
  const sourceNames = Object.keys(source);
  const experts = model.experts.length;
  if (sourceNames.length === 0) throw new CheckpointLayoutError(`${file}: holds no tensors`);
  let best = { layout: 'tailor' as CheckpointLayout, prefix: '', resolved: 0 };
  for (const layout of Object.keys(LAYOUT_DESCRIPTIONS) as CheckpointLayout[]) {
    for (const prefix of PREFIXES) {
      const resolved = targets.filter((t) => {
        const name = nameIn(layout, t, experts);
        return name !== undefined && prefix + name in source;
      }).length;
      if (resolved > best.resolved) best = { layout, prefix, resolved };
    }
  }
  if (best.resolved === 0) {
    throw new CheckpointLayoutError(
      `${file}: its tensor names (${few(sourceNames)}) match none of the known layouts ` +
        `(tailor's, e.g. '${targets[0]}'; SADE/RIDE/BalPoE's, e.g. 'state_dict.backbone.conv1.weight'); ` +
        'give a checkpoint saved by tailor or by the SADE/RIDE/BalPoE trainers for this arch.type',
    );
  }
  const { layout, prefix } = best;
  const inside = sourceNames.filter((n) => n.startsWith(prefix)).map((n) => n.slice(prefix.length));
  const held = expertsIn(inside);
  if (held !== undefined && held !== experts) {
    throw new CheckpointLayoutError(
      `${file}: holds ${held === 1 ? 'a single model' : `${held} experts`} but the config's model has ${experts}; ` +
        `set ${arch}.args.num_experts to ${held}`,
    );
  }
  const mapping = new Map<string, string>();
  const missing: string[] = [];
  for (const target of targets) {
    const local = nameIn(layout, target, experts);
    const name = local === undefined ? undefined : prefix + local;
    if (name === undefined || !(name in source)) {
      // Older checkpoints lack BN's step counter; it does not enter evaluation.
      if (!target.endsWith('num_batches_tracked')) missing.push(local ?? target);
      continue;
    }
    const want = own[target]!.shape;
    const got = source[name]!.shape;
    if (want.length !== got.length || want.some((d, i) => d !== got[i])) {
      const hint = /(^|\.)classifier\./.test(target)
        ? classifierHint(arch, target, !targets.some((t) => t.endsWith('classifier.bias')), want, got)
        : target === 'conv1.weight' && want[1] !== got[1]
          ? `the checkpoint takes ${got[1]}-channel images: set ${arch}.args.in_channels to ${got[1]} (and use such a data set)`
          : `the backbone (${arch}.type, reduce_dimension, layer*_output_dim, share_layer3) differs from the checkpoint`;
      throw new CheckpointLayoutError(
        `${file}: '${name}' has shape [${got.join(', ')}] but the model's '${target}' is [${want.join(', ')}]; ${hint}`,
      );
    }
    mapping.set(target, name);
  }
  const used = new Set([...mapping.values()].map((n) => n.slice(prefix.length)));
  const unexpected = inside.filter((n) => !used.has(n) && !IGNORABLE.test(n));
  if (missing.length > 0 || unexpected.length > 0) {
    const parts = [
      missing.length > 0 ? `no tensor for ${few(missing)}` : '',
      unexpected.length > 0 ? `no place in the model for ${few(unexpected.map((n) => prefix + n))}` : '',
    ].filter(Boolean);
    throw new CheckpointLayoutError(
      `${file}: read as the ${LAYOUT_DESCRIPTIONS[layout]}${prefix ? ` under '${prefix}'` : ''}, ${parts.join('; ')}; ` +
        `the config must build the checkpoint's model (${arch}.type, num_experts, use_norm, reduce_dimension, layer*_output_dim, share_layer3)`,
    );
  }
  const ignored = inside.filter((n) => IGNORABLE.test(n)).map((n) => prefix + n);
  return { mapping, report: { layout, prefix, loaded: mapping.size, ignored } };
}

/**
 * Sets every tensor of the model (trunk, experts, classifiers, BN statistics) from `source`, a
 * weights file's tensors read from `file` (named in errors), in whichever known layout they come;
 * returns the layout recognised. `arch` names the config section of the model in errors
 * (`distill_arch` for a teacher). The source tensors are not disposed here.
 * @throws {@link CheckpointLayoutError} when the names or shapes do not fit the model.
 */
export function loadModelWeights(
  model: MultiExpertModel,
  source: Record<string, Tensor>,
  file: string,
  arch = 'arch',
): ModelWeightsReport {
  const { mapping, report } = modelWeightsMapping(model, source, file, arch);
  const own = model.stateDict();
  noGrad(() => {
    for (const [target, name] of mapping) own[target]!.copy_(source[name]!);
  });
  return report;
}
