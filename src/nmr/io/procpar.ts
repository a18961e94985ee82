// Reader for VnmrJ / VNMR parameter files (procpar), written from the format description in the
// VnmrJ User Programming manual ("Parameters and data"). Each parameter is three parts:
//   name subtype basictype maxvalue minvalue stepsize Ggroup Dgroup protection active intptr
//   N value1 ... valueN      (reals on one line; strings quoted, the first on this line, one per line after)
//   M enum1 ... enumM        (the allowed values, same quoting)
// Values may run over several lines; the reader counts tokens, not lines.
import { NmrFormatError } from './errors.js';

/** More values than any VnmrJ array parameter holds; bounds a corrupt count before anything is allocated. */
const MAX_VALUES = 1 << 20;

/** One procpar parameter: its values (numbers for real parameters, strings for string ones) and whether it is on. */
export interface ProcparParameter {
  name: string;
  /** 1: real, 2: string (0 in files written by some tools: treated as real when the values are numbers). */
  basicType: number;
  values: (number | string)[];
  /** VnmrJ's active flag: an inactive parameter ('n' on the command line) is not used by processing. */
  active: boolean;
  /** The file line where the parameter starts (1-based), for messages. */
  line: number;
}

/** A tokenizer over the whole file that keeps line numbers for error messages. */
class Tokens {
  private pos = 0;
  line = 1;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {}

  /** Skips spaces; stops at the end of the line unless crossLines. Returns false at the end of the text. */
  private skip(crossLines: boolean): boolean {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t[this.pos]!;
      if (c === '\n') {
        if (!crossLines) return true;
        this.line++;
      } else if (c !== ' ' && c !== '\t' && c !== '\r') return true;
      this.pos++;
    }
    return false;
  }

  atEnd(): boolean {
    return !this.skip(true);
  }

  /** The rest of the current line (the header line of a parameter), consumed with its newline. */
  restOfLine(): string {
    this.skip(true);
    const end = this.text.indexOf('\n', this.pos);
    const stop = end < 0 ? this.text.length : end;
    const s = this.text.slice(this.pos, stop);
    this.pos = stop;
    return s;
  }

  /** The next token: a bare word, or a double-quoted string with backslash escapes. */
  next(what: string): { token: string; quoted: boolean } {
    if (!this.skip(true)) throw this.fail(what, 'the file ends here', 'the procpar file is truncated');
    const t = this.text;
    if (t[this.pos] === '"') {
      const startLine = this.line;
      let out = '';
      this.pos++;
      while (this.pos < t.length && t[this.pos] !== '"') {
        let c = t[this.pos]!;
        if (c === '\\' && this.pos + 1 < t.length) c = t[++this.pos]!;
        if (c === '\n') this.line++;
        out += c;
        this.pos++;
      }
      if (this.pos >= t.length)
        throw new NmrFormatError(
          `${this.file}:${startLine}`,
          what,
          'a string is not closed',
          'the procpar file is truncated',
        );
      this.pos++;
      return { token: out, quoted: true };
    }
    const start = this.pos;
    while (this.pos < t.length && !/\s/.test(t[this.pos]!)) this.pos++;
    return { token: t.slice(start, this.pos), quoted: false };
  }

  fail(what: string, problem: string, remedy?: string): NmrFormatError {
    return new NmrFormatError(`${this.file}:${this.line}`, what, problem, remedy);
  }
}

function count(tokens: Tokens, what: string): number {
  const { token } = tokens.next(what);
  const n = Number(token);
  if (!Number.isInteger(n) || n < 0 || n > MAX_VALUES)
    throw tokens.fail(what, `expected a count in 0..${MAX_VALUES}, found '${token.slice(0, 40)}'`);
  return n;
}

/** Parses the text of a procpar file; errors name the file, the line and the parameter. */
export function parseProcpar(file: string, text: string): Map<string, ProcparParameter> {
  const tokens = new Tokens(text, file);
  const out = new Map<string, ProcparParameter>();
  while (!tokens.atEnd()) {
    const line = tokens.line;
    const header = tokens.restOfLine().trim().split(/\s+/);
    const name = header[0]!;
    if (header.length !== 11 || !/^[A-Za-z_$][\w$]*$/.test(name))
      throw tokens.fail(
        'parameter',
        `expected 'name subtype basictype max min step Ggroup Dgroup protection active intptr', found '${header.join(' ').slice(0, 60)}'`,
        'not a VnmrJ procpar file, or a corrupt one',
      );
    const basicType = Number(header[2]);
    const n = count(tokens, `${name}: number of values`);
    const values: (number | string)[] = [];
    for (let i = 0; i < n; i++) {
      const { token, quoted } = tokens.next(`${name}: value ${i + 1}`);
      if (quoted || basicType === 2) values.push(token);
      else {
        const v = Number(token);
        if (token === '' || !Number.isFinite(v))
          throw tokens.fail(name, `value ${i + 1} is '${token.slice(0, 40)}', not a number`);
        values.push(v);
      }
    }
    const m = count(tokens, `${name}: number of enumerated values`);
    for (let i = 0; i < m; i++) tokens.next(`${name}: enumerated value ${i + 1}`);
    // The first occurrence wins, as in the other parameter readers.
    if (!out.has(name)) out.set(name, { name, basicType, values, active: header[9] !== '0', line });
  }
  return out;
}

/** A procpar file with typed accessors whose errors name the file and the parameter. */
export class Procpar {
  constructor(
    readonly file: string,
    readonly parameters: Map<string, ProcparParameter>,
  ) {}

  static parse(file: string, text: string): Procpar {
    return new Procpar(file, parseProcpar(file, text));
  }

  /** The first value of a real parameter, or undefined when the parameter is absent. */
  optionalNumber(name: string): number | undefined {
    const p = this.parameters.get(name);
    if (p === undefined) return undefined;
    const v = p.values[0];
    if (typeof v !== 'number')
      throw new NmrFormatError(this.file, name, `expected a number, found '${String(v).slice(0, 40)}'`);
    return v;
  }

  /** A required positive number (frequencies, widths). */
  positive(name: string): number {
    const v = this.optionalNumber(name);
    if (v === undefined)
      throw new NmrFormatError(this.file, name, 'missing', 'the procpar file is incomplete');
    if (!(v > 0)) throw new NmrFormatError(this.file, name, `expected a positive number, found ${v}`);
    return v;
  }

  /** The first value of a parameter that is on (active), or undefined when it is absent or off. */
  activeNumber(name: string): number | undefined {
    const p = this.parameters.get(name);
    return p?.active ? this.optionalNumber(name) : undefined;
  }

  /** The first value of a string parameter, or undefined. */
  string(name: string): string | undefined {
    const v = this.parameters.get(name)?.values[0];
    return v === undefined ? undefined : String(v);
  }

  /** Every value of a parameter (arrayed parameters hold one per FID). */
  values(name: string): (number | string)[] {
    return this.parameters.get(name)?.values ?? [];
  }
}
