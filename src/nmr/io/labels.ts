// JCAMP-style labelled data records (##LABEL= value), as used by Bruker acqus/procs files and by
// JCAMP-DX headers. Values continue on following lines until the next ##label; $$ starts a comment.
import { NmrFormatError } from './errors.js';

/** Canonical label: upper case without spaces, dashes or slashes ('DATA TYPE' -> 'DATATYPE'). */
export function canonicalLabel(label: string): string {
  return label.toUpperCase().replace(/[\s\-/]/g, '');
}

export interface LabelledRecord {
  label: string;
  value: string;
  line: number;
}

/**
 * Splits text into records. Comment text after $$ is dropped. Blank and comment-only lines in a
 * value are dropped too, or with keepBlankLines kept as empty lines, so that the line numbers of
 * data tables stay exact (JCAMP-DX data blocks).
 */
export function parseLabelledRecords(text: string, keepBlankLines = false): LabelledRecord[] {
  const lines = text.split(/\r\n|\r|\n/);
  const out: LabelledRecord[] = [];
  // The lines of each record's value, joined at the end (long data blocks have many).
  const values: string[][] = [];
  let current: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.startsWith('##')) {
      const eq = raw.indexOf('=');
      if (eq < 0) {
        current = undefined;
        continue;
      }
      const value = stripComment(raw.slice(eq + 1)).trim();
      out.push({ label: canonicalLabel(raw.slice(2, eq)), value, line: i + 1 });
      current = [value];
      values.push(current);
    } else if (current) {
      const v = stripComment(raw);
      if (v.trim() !== '') current.push(v);
      else if (keepBlankLines) current.push('');
    }
  }
  out.forEach((record, i) => (record.value = values[i]!.join('\n')));
  return out;
}

function stripComment(s: string): string {
  const c = s.indexOf('$$');
  return c >= 0 ? s.slice(0, c) : s;
}

/** A parameter file (acqus, procs, or a JCAMP-DX block header) with typed accessors. */
export class ParameterSet {
  readonly values = new Map<string, string>();

  constructor(
    readonly file: string,
    records: LabelledRecord[],
  ) {
    // The first occurrence wins (JCAMP-DX files may repeat labels in later blocks).
    for (const r of records) if (!this.values.has(r.label)) this.values.set(r.label, r.value);
  }

  static parse(file: string, text: string): ParameterSet {
    return new ParameterSet(file, parseLabelledRecords(text));
  }

  has(label: string): boolean {
    return this.values.has(canonicalLabel(label));
  }

  raw(label: string): string | undefined {
    return this.values.get(canonicalLabel(label));
  }

  /** A required number; the error names the file and the field. */
  number(label: string): number {
    const v = this.optionalNumber(label);
    if (v === undefined)
      throw new NmrFormatError(
        this.file,
        label,
        'missing or not a number',
        'check that the file is complete',
      );
    return v;
  }

  optionalNumber(label: string): number | undefined {
    const raw = this.raw(label);
    if (raw === undefined) return undefined;
    const first = raw.trim().split(/[\s,]+/)[0] ?? '';
    const v = Number(first);
    if (first === '' || !Number.isFinite(v)) {
      throw new NmrFormatError(this.file, label, `expected a number, found '${raw.slice(0, 40)}'`);
    }
    return v;
  }

  /** A required whole number in [min, max] (sizes, counts); the error names the field. */
  integer(label: string, min: number, max: number): number {
    const v = this.number(label);
    if (!Number.isInteger(v) || v < min || v > max)
      throw new NmrFormatError(this.file, label, `expected a whole number in ${min}..${max}, found ${v}`);
    return v;
  }

  /** A required positive number (frequencies, widths); the error names the field. */
  positive(label: string): number {
    const v = this.number(label);
    if (!(v > 0)) throw new NmrFormatError(this.file, label, `expected a positive number, found ${v}`);
    return v;
  }

  /** A string value without its <...> brackets. */
  string(label: string): string | undefined {
    const raw = this.raw(label);
    if (raw === undefined) return undefined;
    const t = raw.trim();
    return t.startsWith('<') && t.endsWith('>') ? t.slice(1, -1) : t;
  }

  /** An array value written as '(0..n)' followed by numbers. */
  array(label: string): number[] | undefined {
    const raw = this.raw(label);
    if (raw === undefined) return undefined;
    const body = raw.replace(/^\s*\(\s*\d+\s*\.\.\s*\d+\s*\)/, '');
    return body
      .trim()
      .split(/\s+/)
      .filter((s) => s !== '')
      .map(Number);
  }
}
