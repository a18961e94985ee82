// A small schema checker for JSON configs: every error names the file and the dotted path of
// the field, unknown keys are errors with the closest valid key suggested.

export type Schema =
  | { kind: 'number'; integer?: boolean; min?: number; max?: number; optional?: boolean; doc?: string }
  | { kind: 'string'; values?: readonly string[]; optional?: boolean; doc?: string }
  | { kind: 'boolean'; optional?: boolean; doc?: string }
  | { kind: 'array'; items: Schema; minLength?: number; optional?: boolean; doc?: string }
  | { kind: 'object'; fields: Record<string, Schema>; optional?: boolean; doc?: string }
  | { kind: 'any'; optional?: boolean; doc?: string }
  | { kind: 'oneOf'; options: Schema[]; expected: string; optional?: boolean; doc?: string };

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly path: string,
    detail: string,
  ) {
    super(`${file}: ${path ? `${path}: ` : ''}${detail}`);
    this.name = 'ConfigError';
  }
}

/** Edit distance counting a swap of two neighbouring letters as one edit (a common typo). */
export function levenshtein(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) =>
    Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[x.length]![y.length]!;
}

/** The closest candidate to word, if it is close enough to be a plausible misspelling. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = levenshtein(word, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = c;
    }
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.ceil(word.length / 3)) ? best : undefined;
}

export function suggestion(word: string, candidates: Iterable<string>): string {
  const list = [...candidates];
  const near = closest(word, list);
  return near ? `; did you mean '${near}'?` : `; valid: ${list.join(', ')}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${JSON.stringify(value)}`;
}

export function validate(schema: Schema, value: unknown, file: string, path = ''): void {
  if (value === undefined) {
    if (schema.optional) return;
    throw new ConfigError(file, path, `missing required field${schema.doc ? ` (${schema.doc})` : ''}`);
  }
  switch (schema.kind) {
    case 'any':
      return;
    case 'oneOf': {
      const fits = schema.options.some((option) => {
        try {
          validate(option, value, file, path);
          return true;
        } catch {
          return false;
        }
      });
      if (!fits) throw new ConfigError(file, path, `expected ${schema.expected}, got ${describe(value)}`);
      return;
    }
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new ConfigError(file, path, `expected a number, got ${describe(value)}`);
      if (schema.integer && !Number.isInteger(value))
        throw new ConfigError(file, path, `expected an integer, got ${value}`);
      if (schema.min !== undefined && value < schema.min)
        throw new ConfigError(file, path, `must be >= ${schema.min}, got ${value}`);
      if (schema.max !== undefined && value > schema.max)
        throw new ConfigError(file, path, `must be <= ${schema.max}, got ${value}`);
      return;
    case 'string':
      if (typeof value !== 'string')
        throw new ConfigError(file, path, `expected a string, got ${describe(value)}`);
      if (schema.values && !schema.values.includes(value)) {
        throw new ConfigError(file, path, `unknown value '${value}'${suggestion(value, schema.values)}`);
      }
      return;
    case 'boolean':
      if (typeof value !== 'boolean')
        throw new ConfigError(file, path, `expected true or false, got ${describe(value)}`);
      return;
    case 'array':
      if (!Array.isArray(value))
        throw new ConfigError(file, path, `expected an array, got ${describe(value)}`);
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        throw new ConfigError(file, path, `needs at least ${schema.minLength} entries`);
      }
      value.forEach((v, i) => validate(schema.items, v, file, `${path}[${i}]`));
      return;
    case 'object': {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        throw new ConfigError(file, path, `expected an object, got ${describe(value)}`);
      }
      const record = value as Record<string, unknown>;
      for (const key of Object.keys(record)) {
        if (!(key in schema.fields)) {
          throw new ConfigError(
            file,
            path ? `${path}.${key}` : key,
            `unknown key${suggestion(key, Object.keys(schema.fields))}`,
          );
        }
      }
      for (const [key, fieldSchema] of Object.entries(schema.fields)) {
        validate(fieldSchema, record[key], file, path ? `${path}.${key}` : key);
      }
      return;
    }
  }
}

export const num = (
  doc?: string,
  extra: Partial<{ integer: boolean; min: number; max: number }> = {},
): Schema => ({
  kind: 'number',
  optional: true,
  ...extra,
  ...(doc ? { doc } : {}),
});
export const int = (doc?: string, min = 0): Schema => ({
  kind: 'number',
  integer: true,
  min,
  optional: true,
  ...(doc ? { doc } : {}),
});
export const bool = (doc?: string): Schema => ({ kind: 'boolean', optional: true, ...(doc ? { doc } : {}) });
export const str = (values?: readonly string[], doc?: string): Schema => ({
  kind: 'string',
  optional: true,
  ...(values ? { values } : {}),
  ...(doc ? { doc } : {}),
});
export const obj = (fields: Record<string, Schema>, optional = true): Schema => ({
  kind: 'object',
  fields,
  optional,
});
export const required = (s: Schema): Schema => ({ ...s, optional: false });
