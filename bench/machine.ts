import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { round } from './stats.ts';

/** What a bench report records about where it ran: the machine, its load at the start, Node, the commit. */
export function machineFacts(): Record<string, string | number> {
  const cpus = os.cpus();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      encoding: 'utf8',
      timeout: 5_000,
    }).trim();
  } catch {
    // not a git checkout
  }
  return {
    date: new Date().toISOString(),
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: round(os.totalmem() / 2 ** 30, 1),
    loadAverage1m: round(os.loadavg()[0] ?? 0, 2),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    commit,
  };
}
