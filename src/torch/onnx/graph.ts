// An ONNX graph under construction: nodes, initializers (the weights, copied out of libtorch) and
// the named inputs and outputs, encoded with onnx-proto (the ONNX protobuf schema on protobufjs)
// rather than by hand, so the bytes follow the schema ONNX Runtime reads.
import { createRequire } from 'node:module';
import type { onnx as OnnxSchema } from 'onnx-proto';
import { UserError } from '../../util/errors.js';
import { Tensor } from '../tensor.js';

let schema: typeof OnnxSchema | undefined;
/**
 * The schema's classes, loaded on the first graph: every command that loads the tensor library
 * would otherwise pay for reading the 330 kB generated schema (about 45 ms) at start-up.
 */
function loadSchema(): typeof OnnxSchema {
  schema ??= (createRequire(import.meta.url)('onnx-proto') as { onnx: typeof OnnxSchema }).onnx;
  return schema;
}

/** The ONNX opset the graphs are built for (LayerNormalization, ReduceMean's axes attribute). */
export const ONNX_OPSET = 17;

/**
 * A module or an operation that has no ONNX mapping (or not in the state it is in, such as a
 * batch norm without running statistics); the message names it.
 */
export class OnnxExportError extends UserError {}

/** An attribute of a node, tagged with its ONNX type (ONNX tells 1 from 1.0). */
export type OnnxAttribute =
  | { int: number }
  | { float: number }
  | { ints: readonly number[] }
  | { floats: readonly number[] }
  | { string: string };

/**
 * The element type of a graph input or output: float32, boolean (an attention mask) or int64
 * (indices: an embedding's input, a prediction's classes).
 */
export type OnnxElementType = 'float' | 'bool' | 'int64';

/** A dimension of a graph input or output: a fixed size, or a name for a dynamic one ('batch'). */
export type OnnxDim = number | string;

/** Constant data for an initializer: float32 (the default) or int64 values. */
export interface OnnxConstant {
  data: Float32Array | readonly number[];
  dims: readonly number[];
  type?: 'float' | 'int64';
}

/** What the model file says about itself besides the graph. */
export interface OnnxModelInfo {
  producerVersion: string;
  graphName: string;
  docString?: string;
  /** Key/value metadata (ONNX metadata_props): values that are not strings are written as JSON. */
  metadata?: Record<string, unknown>;
}

/**
 * An ONNX graph being built: every method returns the name of the value it produced, so a
 * module's export reads like its forward pass. Names are made unique here.
 *
 * @example
 * ```ts
 * import { onnx } from 'tailor/torch';
 * const g = new onnx.OnnxGraph();
 * const x = g.input('x', ['batch', 4]);
 * g.output('y', g.node('Relu', [x]), ['batch', 4]);
 * const bytes = g.encode({ producerVersion: '0.1.0', graphName: 'relu' });
 * ```
 */
export class OnnxGraph {
  private readonly onnx = loadSchema();
  private readonly nodes: OnnxSchema.NodeProto[] = [];
  private readonly initializers: OnnxSchema.TensorProto[] = [];
  private readonly inputs: OnnxSchema.ValueInfoProto[] = [];
  private readonly outputs: OnnxSchema.ValueInfoProto[] = [];
  private readonly used = new Set<string>();
  private readonly declared = new Map<string, readonly OnnxDim[]>();
  private readonly types = new Map<string, OnnxElementType>();

  /** A name not used yet, from a hint ('conv1.weight' stays as it is the first time). */
  fresh(hint: string): string {
    const base = hint.replace(/[^A-Za-z0-9_.:/-]/g, '_') || 'v';
    let name = base;
    for (let i = 1; this.used.has(name); i++) name = `${base}_${i}`;
    this.used.add(name);
    return name;
  }

  /** Declares a graph input: float32, boolean (an attention mask) or int64 (indices). */
  input(name: string, dims: readonly OnnxDim[], type: OnnxElementType = 'float'): string {
    if (this.used.has(name)) throw new Error(`ONNX graph: the name '${name}' is taken`);
    this.used.add(name);
    this.inputs.push(valueInfo(this.onnx, name, dims, type));
    this.declared.set(name, [...dims]);
    this.types.set(name, type);
    return name;
  }

  /**
   * The element type of a graph input as declared; undefined for a value the graph computes.
   * Forms that take indices read it to name a float input before ONNX Runtime refuses the model.
   */
  typeOf(value: string): OnnxElementType | undefined {
    return this.types.get(value);
  }

  /**
   * The dims known for `value` at export time: a graph input's declared dims, or those recorded
   * with {@link OnnxGraph.setDims}; undefined for any other value. Forms whose nodes depend on a
   * size (adaptive pooling) read them.
   */
  dimsOf(value: string): readonly OnnxDim[] | undefined {
    return this.declared.get(value);
  }

  /** Records the dims of a value the graph computes, for forms that need sizes at export time. */
  setDims(value: string, dims: readonly OnnxDim[]): void {
    if (!this.used.has(value)) throw new Error(`ONNX graph: there is no value '${value}'`);
    this.declared.set(value, [...dims]);
  }

  /**
   * Makes `value` a graph output called `name` (through an Identity when renamed), float32 unless
   * `type` says otherwise (int64 for indices such as a prediction's classes).
   */
  output(name: string, value: string, dims: readonly OnnxDim[], type: OnnxElementType = 'float'): void {
    if (value !== name) {
      if (this.used.has(name)) throw new Error(`ONNX graph: the name '${name}' is taken`);
      this.used.add(name);
      this.nodes.push(
        this.onnx.NodeProto.create({ opType: 'Identity', input: [value], output: [name], name }),
      );
    }
    this.outputs.push(valueInfo(this.onnx, name, dims, type));
  }

  /** A constant stored in the file (weights, shapes, axes). */
  constant(hint: string, value: OnnxConstant): string {
    const name = this.fresh(hint);
    const count = value.dims.reduce((a, b) => a * b, 1);
    if (value.data.length !== count)
      throw new Error(`ONNX constant '${name}': ${value.data.length} values for dims [${value.dims}]`);
    const int64 = value.type === 'int64';
    this.initializers.push(
      this.onnx.TensorProto.create({
        name,
        dims: [...value.dims],
        dataType: int64 ? this.onnx.TensorProto.DataType.INT64 : this.onnx.TensorProto.DataType.FLOAT,
        // Raw little-endian bytes: compact for large weights, and exactly the float32 values.
        rawData: int64
          ? new Uint8Array(BigInt64Array.from(value.data, (v) => BigInt(v)).buffer)
          : new Uint8Array(Float32Array.from(value.data).buffer),
      }),
    );
    return name;
  }

  /** A libtorch tensor's values as a float32 constant (of `dims`, default its own shape). */
  tensor(hint: string, t: Tensor, dims: readonly number[] = t.shape): string {
    return this.constant(hint, { data: t.toFloat32Array(), dims });
  }

  /** int64 values, as the shape and axes inputs of Reshape, Slice, Pad, Unsqueeze take them. */
  ints(hint: string, values: readonly number[]): string {
    return this.constant(hint, { data: values, dims: [values.length], type: 'int64' });
  }

  /** A float32 scalar constant. */
  scalar(hint: string, value: number): string {
    return this.constant(hint, { data: [value], dims: [] });
  }

  /** Adds a node with one output and returns the output's name. */
  node(opType: string, inputs: readonly string[], attributes: Record<string, OnnxAttribute> = {}): string {
    return this.nodeN(opType, inputs, 1, attributes)[0]!;
  }

  /** Adds a node with `outputs` outputs and returns their names. */
  nodeN(
    opType: string,
    inputs: readonly string[],
    outputs: number,
    attributes: Record<string, OnnxAttribute> = {},
  ): string[] {
    const name = this.fresh(opType);
    const out = Array.from({ length: outputs }, (_, i) => this.fresh(`${name}.out${i}`));
    this.nodes.push(
      this.onnx.NodeProto.create({
        opType,
        name,
        input: [...inputs],
        output: out,
        attribute: Object.entries(attributes).map(([key, v]) => attribute(this.onnx, key, v)),
      }),
    );
    return out;
  }

  // Private: onnx-proto's declarations need the `long` package's global types, so its classes stay
  // out of tailor's public declarations (a user's project type-checks without them).
  /** The model: the graph at {@link ONNX_OPSET}, with its producer and metadata. */
  private model(info: OnnxModelInfo): OnnxSchema.ModelProto {
    if (this.inputs.length === 0 || this.outputs.length === 0)
      throw new Error('ONNX graph: declare its inputs and outputs first');
    const metadata = Object.entries(info.metadata ?? {}).map(([key, v]) =>
      this.onnx.StringStringEntryProto.create({ key, value: typeof v === 'string' ? v : JSON.stringify(v) }),
    );
    return this.onnx.ModelProto.create({
      irVersion: this.onnx.Version.IR_VERSION,
      opsetImport: [this.onnx.OperatorSetIdProto.create({ domain: '', version: ONNX_OPSET })],
      producerName: 'tailor',
      producerVersion: info.producerVersion,
      ...(info.docString ? { docString: info.docString } : {}),
      metadataProps: metadata,
      graph: this.onnx.GraphProto.create({
        name: info.graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      }),
    });
  }

  /** The model file's bytes. */
  encode(info: OnnxModelInfo): Uint8Array {
    return this.onnx.ModelProto.encode(this.model(info)).finish();
  }
}

function valueInfo(
  onnx: typeof OnnxSchema,
  name: string,
  dims: readonly OnnxDim[],
  type: OnnxElementType = 'float',
): OnnxSchema.ValueInfoProto {
  const { FLOAT, BOOL, INT64 } = onnx.TensorProto.DataType;
  const elemType = { float: FLOAT, bool: BOOL, int64: INT64 }[type];
  return onnx.ValueInfoProto.create({
    name,
    type: onnx.TypeProto.create({
      tensorType: onnx.TypeProto.Tensor.create({
        elemType,
        shape: onnx.TensorShapeProto.create({
          dim: dims.map((d) =>
            onnx.TensorShapeProto.Dimension.create(typeof d === 'number' ? { dimValue: d } : { dimParam: d }),
          ),
        }),
      }),
    }),
  });
}

function attribute(onnx: typeof OnnxSchema, name: string, v: OnnxAttribute): OnnxSchema.AttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if ('int' in v) return onnx.AttributeProto.create({ name, type: T.INT, i: v.int });
  if ('float' in v) return onnx.AttributeProto.create({ name, type: T.FLOAT, f: v.float });
  if ('ints' in v) return onnx.AttributeProto.create({ name, type: T.INTS, ints: [...v.ints] });
  if ('floats' in v) return onnx.AttributeProto.create({ name, type: T.FLOATS, floats: [...v.floats] });
  return onnx.AttributeProto.create({ name, type: T.STRING, s: new TextEncoder().encode(v.string) });
}
