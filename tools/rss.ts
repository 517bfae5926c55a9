import { readFileSync } from 'node:fs';

export interface RssReading {
  /** Current resident set size, MiB. */
  rssMiB: number;
  /** Kernel-tracked peak resident set size (VmHWM), MiB. */
  hwmMiB: number;
}

/** Reads VmRSS and VmHWM of a process from /proc; null if the process is gone or /proc is unavailable. */
export function readRss(pid: number): RssReading | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const field = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return match?.[1] ? Number(match[1]) / 1024 : Number.NaN;
  };
  return { rssMiB: field('VmRSS'), hwmMiB: field('VmHWM') };
}

/** Samples a process's RSS periodically, remembering the largest VmRSS seen since the last reset. */
export class RssSampler {
  private timer: NodeJS.Timeout | null = null;
  private maxRss = 0;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 250,
  ) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  /** Largest VmRSS sampled since start or the last reset, MiB. */
  maxSampledMiB(): number {
    this.sample();
    return this.maxRss;
  }

  resetMax(): void {
    this.maxRss = 0;
    this.sample();
  }

  read(): RssReading | null {
    return readRss(this.pid);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private sample(): void {
    const reading = readRss(this.pid);
    if (reading && reading.rssMiB > this.maxRss) this.maxRss = reading.rssMiB;
  }
}
