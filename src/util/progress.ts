// Progress of long work: a redrawn bar with rate and ETA on a terminal, plain lines otherwise
// (CI logs), at most one line per `plainEvery` fraction of the total.

export interface ProgressOptions {
  label: string;
  total: number;
  unit?: string;
  stream?: NodeJS.WriteStream;
  plainEvery?: number;
  quiet?: boolean;
}

export class Progress {
  private readonly start = performance.now();
  private done = 0;
  private lastDraw = 0;
  private nextPlain: number;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY) && !process.env.CI;
    this.nextPlain = (options.plainEvery ?? 0.25) * options.total;
  }

  /**
   * Advances by n units; `info` is shown after the rate (e.g. the running loss). A function is
   * called only when a line is drawn (so a figure that costs a device read is read only then).
   */
  tick(n = 1, info: string | (() => string) = ''): void {
    this.done += n;
    if (this.options.quiet) return;
    const now = performance.now();
    if (this.tty) {
      if (now - this.lastDraw < 100 && this.done < this.options.total) return;
      this.lastDraw = now;
      const width = 24;
      const frac = Math.min(1, this.done / this.options.total);
      const filled = Math.round(frac * width);
      const bar = '#'.repeat(filled) + '.'.repeat(width - filled);
      this.stream.write(
        `\r${this.options.label} [${bar}] ${(100 * frac).toFixed(0).padStart(3)}% ${this.stats()} ${text(info)}\x1b[K`,
      );
    } else if (this.done >= this.nextPlain || this.done >= this.options.total) {
      this.nextPlain += (this.options.plainEvery ?? 0.25) * this.options.total;
      this.stream.write(
        `${this.options.label} ${this.done}/${this.options.total} ${this.stats()} ${text(info)}\n`,
      );
    }
  }

  private stats(): string {
    const seconds = (performance.now() - this.start) / 1000;
    const rate = this.done / Math.max(seconds, 1e-9);
    const eta = rate > 0 ? (this.options.total - this.done) / rate : Infinity;
    return `${rate.toFixed(1)} ${this.options.unit ?? 'it'}/s ETA ${formatSeconds(eta)}`;
  }

  finish(): number {
    if (this.tty && !this.options.quiet) this.stream.write('\n');
    return (performance.now() - this.start) / 1000;
  }
}

function text(info: string | (() => string)): string {
  return typeof info === 'function' ? info() : info;
}

export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '--:--';
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`
    : `${m}:${String(sec).padStart(2, '0')}`;
}
