// Where a training epoch's time goes, per phase: wall-clock seconds, and the process's CPU
// seconds (all threads), which a loaded machine disturbs far less than wall time when the
// engine runs on one thread. Used by bench/epoch.ts; the trainer only calls mark/lap.
export const PHASES = ['data', 'forward', 'backward', 'optimizer', 'eval'] as const;
export type Phase = (typeof PHASES)[number];
export type PhaseTimes = Record<Phase, number>;

export function emptyPhaseTimes(): PhaseTimes {
  return { data: 0, forward: 0, backward: 0, optimizer: 0, eval: 0 };
}

const cpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

export class PhaseClock {
  readonly wall = emptyPhaseTimes();
  readonly cpu = emptyPhaseTimes();
  #wall = performance.now();
  #cpu = cpuSeconds();

  /** Starts timing from now (time since the last lap is not counted). */
  mark(): void {
    this.#wall = performance.now();
    this.#cpu = cpuSeconds();
  }

  /** Adds the time since the last mark or lap to `phase`. */
  lap(phase: Phase): void {
    const wall = performance.now();
    const cpu = cpuSeconds();
    this.wall[phase] += (wall - this.#wall) / 1000;
    this.cpu[phase] += cpu - this.#cpu;
    this.#wall = wall;
    this.#cpu = cpu;
  }
}
