// Packed variable-length batches (torch.nn.utils.rnn): padSequence, packPaddedSequence,
// padPackedSequence, packSequence and PackedSequence, over libtorch's own kernels
// (aten::pad_sequence, aten::_pack_padded_sequence, aten::_pad_packed_sequence), so the packed
// layout is the one LSTM and GRU's packed kernels (aten::lstm.data, aten::gru.data) read. The
// lengths are checked here, where a JavaScript caller can be told which one is wrong.
import { Tensor } from '../tensor.js';
import { tensor, arange, zerosLike } from '../creation.js';
import { tidy } from '../scope.js';
import * as aten from '../generated/aten.js';
import { ArgumentError, checksOf, type ArgumentChecks } from '../../util/arguments.js';

/**
 * A batch of sequences of different lengths packed time step by time step
 * (torch.nn.utils.rnn.PackedSequence): `data` holds the steps of every sequence still running at
 * each time step, `batchSizes` (int64, on the CPU) how many sequences run at each step. When the
 * batch was packed in another order than by decreasing length, `sortedIndices` maps the packed
 * order to the caller's batch and `unsortedIndices` back. LSTM and GRU take and return it. The
 * object owns its tensors: free them with `dispose()` (or let a `torch.tidy` do it).
 */
export class PackedSequence {
  /** The inverse of `sortedIndices` (computed from it when not given), or null for a sorted batch. */
  readonly unsortedIndices: Tensor | null;

  constructor(
    /** The packed steps, [total steps, ...features]. */
    readonly data: Tensor,
    /** The number of sequences at each time step, int64 on the CPU, non-increasing. */
    readonly batchSizes: Tensor,
    /** For an unsorted batch, the caller's batch index of each packed sequence (int64); else null. */
    readonly sortedIndices: Tensor | null = null,
    unsortedIndices: Tensor | null = null,
  ) {
    const c = checksOf('PackedSequence');
    if (!(data instanceof Tensor)) c.fail('data', 'a Tensor', data);
    if (!(batchSizes instanceof Tensor) || batchSizes.ndim !== 1 || batchSizes.dtype !== 'int64')
      c.fail('batchSizes', 'a 1-d int64 Tensor', batchSizes);
    if (sortedIndices !== null && !(sortedIndices instanceof Tensor))
      c.fail('sortedIndices', 'a Tensor or null', sortedIndices);
    if (unsortedIndices !== null && !(unsortedIndices instanceof Tensor))
      c.fail('unsortedIndices', 'a Tensor or null', unsortedIndices);
    this.unsortedIndices = unsortedIndices ?? (sortedIndices ? invertPermutation(sortedIndices) : null);
  }

  /** The number of sequences (the batch size of the first time step). */
  get batchSize(): number {
    return this.batchSizes.toNumbers()[0] ?? 0;
  }

  /** Frees data, batchSizes and the indices. */
  dispose(): void {
    for (const t of [this.data, this.batchSizes, this.sortedIndices, this.unsortedIndices]) t?.dispose();
  }
}

/** The inverse permutation of a 1-d int64 permutation: out[perm[i]] = i. */
function invertPermutation(perm: Tensor): Tensor {
  return tidy(() =>
    aten.scatter_src(zerosLike(perm), 0, perm, arange(0, perm.numel, 1, 'int64', perm.device)),
  );
}

/** Options of padSequence. */
export interface PadSequenceOptions {
  /** Output [batch, time, ...] rather than [time, batch, ...] (default false). */
  batchFirst?: boolean;
  /** The value of the padded places (default 0). */
  paddingValue?: number;
}

function flag(c: ArgumentChecks, v: unknown, name: string, fallback: boolean): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') c.fail(`options.${name}`, 'true or false', v);
  return v as boolean;
}

function sequencesOf(c: ArgumentChecks, sequences: Tensor[]): Tensor[] {
  if (!Array.isArray(sequences) || sequences.length === 0 || sequences.some((s) => !(s instanceof Tensor)))
    c.fail('sequences', 'a non-empty array of Tensors', sequences);
  const trailing = sequences[0]!.shape.slice(1).join(', ');
  sequences.forEach((s, i) => {
    if (s.ndim < 1 || s.shape.slice(1).join(', ') !== trailing)
      throw new ArgumentError(
        `${c.fn}: sequences[${i}] must be of shape [length, ${trailing}] like sequences[0], got [${s.shape.join(', ')}]`,
      );
  });
  return sequences;
}

/**
 * Stacks sequences of shape [length_i, ...] into one tensor [longest, batch, ...] ([batch,
 * longest, ...] with batchFirst), padding the shorter ones with `paddingValue`
 * (torch.nn.utils.rnn.pad_sequence).
 */
export function padSequence(sequences: Tensor[], options: PadSequenceOptions = {}): Tensor {
  const c = checksOf('padSequence');
  sequencesOf(c, sequences);
  const o = c.object(options, 'options');
  const batchFirst = flag(c, o.batchFirst, 'batchFirst', false);
  const paddingValue = c.number(o.paddingValue ?? 0, 'options.paddingValue');
  return aten.pad_sequence(sequences, batchFirst, paddingValue);
}

/** Options of packPaddedSequence. */
export interface PackPaddedSequenceOptions {
  /** The input is [batch, time, ...] rather than [time, batch, ...] (default false). */
  batchFirst?: boolean;
  /**
   * The lengths must be non-increasing (default true, as PyTorch). With false the batch is
   * sorted by length here and `padPackedSequence` and the recurrent layers restore its order.
   */
  enforceSorted?: boolean;
}

function lengthsOf(c: ArgumentChecks, lengths: number[] | Tensor): number[] {
  if (lengths instanceof Tensor) {
    if (lengths.ndim !== 1) c.fail('lengths', 'a 1-d tensor or an array of integers', lengths);
    return lengths.toNumbers();
  }
  if (!Array.isArray(lengths)) c.fail('lengths', 'an array of integers or a 1-d tensor', lengths);
  return lengths;
}

/**
 * Packs a padded batch of sequences (torch.nn.utils.rnn.pack_padded_sequence): `input` is [time,
 * batch, ...] ([batch, time, ...] with batchFirst) and `lengths` (numbers, or a 1-d tensor) the
 * true length of each sequence, every one between 1 and the time steps of `input`. The result
 * feeds {@link LSTM} and {@link GRU}, which then skip the padding; gradients flow back to `input`.
 */
export function packPaddedSequence(
  input: Tensor,
  lengths: number[] | Tensor,
  options: PackPaddedSequenceOptions = {},
): PackedSequence {
  const c = checksOf('packPaddedSequence');
  if (!(input instanceof Tensor) || input.ndim < 2)
    c.fail('input', 'a Tensor of at least 2 dimensions ([time, batch, ...])', input);
  const o = c.object(options, 'options');
  const batchFirst = flag(c, o.batchFirst, 'batchFirst', false);
  const enforceSorted = flag(c, o.enforceSorted, 'enforceSorted', true);
  const given = lengthsOf(c, lengths);
  const batchDim = batchFirst ? 0 : 1;
  const batch = input.shape[batchDim]!;
  const steps = input.shape[1 - batchDim]!;
  if (given.length !== batch)
    throw new ArgumentError(
      `packPaddedSequence: lengths must give one length per sequence of the batch (${batch}, dimension ${batchDim} of input [${input.shape.join(', ')}]), got ${given.length}`,
    );
  given.forEach((n, i) => {
    if (!Number.isSafeInteger(n) || n < 1)
      c.fail(
        `lengths[${i}]`,
        'an integer >= 1 (a sequence of length 0 cannot be packed: leave it out of the batch)',
        n,
      );
    if (n > steps)
      throw new ArgumentError(
        `packPaddedSequence: lengths[${i}] is ${n}, longer than the ${steps} time steps of input [${input.shape.join(', ')}] (batchFirst ${batchFirst}); pad the input to the longest sequence or fix the length`,
      );
  });
  if (enforceSorted && given.some((n, i) => i > 0 && n > given[i - 1]!))
    throw new ArgumentError(
      `packPaddedSequence: lengths must be non-increasing when options.enforceSorted is true, got [${given.join(', ')}]; sort the batch by length or pass enforceSorted: false`,
    );
  return tidy(() => {
    if (enforceSorted) {
      const [data, batchSizes] = aten._pack_padded_sequence(
        input,
        tensor(given, { dtype: 'int64', device: 'cpu' }),
        batchFirst,
      );
      return new PackedSequence(data, batchSizes);
    }
    // a stable sort, as PyTorch's, so equal lengths keep their order
    const order = given.map((_, i) => i).sort((a, b) => given[b]! - given[a]! || a - b);
    const inverse = new Array<number>(order.length);
    order.forEach((j, i) => (inverse[j] = i));
    const device = input.device;
    const sorted = tensor(order, { dtype: 'int64', device });
    const [data, batchSizes] = aten._pack_padded_sequence(
      input.indexSelect(batchDim, sorted),
      tensor(
        order.map((j) => given[j]!),
        { dtype: 'int64', device: 'cpu' },
      ),
      batchFirst,
    );
    return new PackedSequence(data, batchSizes, sorted, tensor(inverse, { dtype: 'int64', device }));
  });
}

/** Options of padPackedSequence. */
export interface PadPackedSequenceOptions {
  /** Output [batch, time, ...] rather than [time, batch, ...] (default false). */
  batchFirst?: boolean;
  /** The value of the padded places (default 0). */
  paddingValue?: number;
  /** Pad to this many time steps rather than the longest sequence's (at least that many). */
  totalLength?: number;
}

/**
 * Undoes {@link packPaddedSequence} (torch.nn.utils.rnn.pad_packed_sequence): returns the padded
 * batch [time, batch, ...] ([batch, time, ...] with batchFirst), in the order the batch had before
 * packing, and the lengths (int64, on the CPU).
 */
export function padPackedSequence(
  sequence: PackedSequence,
  options: PadPackedSequenceOptions = {},
): [Tensor, Tensor] {
  const c = checksOf('padPackedSequence');
  if (!(sequence instanceof PackedSequence)) c.fail('sequence', 'a PackedSequence', sequence);
  const o = c.object(options, 'options');
  const batchFirst = flag(c, o.batchFirst, 'batchFirst', false);
  const paddingValue = c.number(o.paddingValue ?? 0, 'options.paddingValue');
  const longest = sequence.batchSizes.shape[0]!;
  let total = longest;
  if (o.totalLength !== undefined)
    total = c.integer(o.totalLength, `options.totalLength (at least the longest sequence, ${longest})`, {
      min: longest,
    });
  return tidy(() => {
    const [padded, lengths] = aten._pad_packed_sequence(
      sequence.data,
      sequence.batchSizes,
      batchFirst,
      paddingValue,
      total,
    );
    const unsorted = sequence.unsortedIndices;
    if (!unsorted) return [padded, lengths] as [Tensor, Tensor];
    return [
      padded.indexSelect(batchFirst ? 0 : 1, unsorted),
      lengths.indexSelect(0, unsorted.toDevice('cpu')),
    ] as [Tensor, Tensor];
  });
}

/** Options of packSequence. */
export interface PackSequenceOptions {
  /** The sequences must come longest first (default true, as PyTorch); see {@link PackPaddedSequenceOptions}. */
  enforceSorted?: boolean;
}

/**
 * Packs sequences of shape [length_i, ...] (torch.nn.utils.rnn.pack_sequence): padSequence, then
 * packPaddedSequence with their lengths.
 */
export function packSequence(sequences: Tensor[], options: PackSequenceOptions = {}): PackedSequence {
  const c = checksOf('packSequence');
  sequencesOf(c, sequences);
  const o = c.object(options, 'options');
  const enforceSorted = flag(c, o.enforceSorted, 'enforceSorted', true);
  const empty = sequences.findIndex((s) => s.shape[0] === 0);
  if (empty >= 0)
    throw new ArgumentError(
      `packSequence: sequences[${empty}] has no time steps (shape [${sequences[empty]!.shape.join(', ')}]); a sequence of length 0 cannot be packed: leave it out`,
    );
  return tidy(() =>
    packPaddedSequence(
      padSequence(sequences),
      sequences.map((s) => s.shape[0]!),
      { enforceSorted },
    ),
  );
}
