import { readdirSync, readFileSync } from 'node:fs';
import { now, round } from './stats.ts';

/** Linux reports utime/stime in clock ticks; USER_HZ is 100 on every mainstream kernel. */
const TICKS_PER_SECOND = 100;

/** user+system CPU seconds of a process (all its threads) from /proc; null if unavailable. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name (which may contain spaces): state is field 3.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime + stime) ? (utime + stime) / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** CPU used during a scenario, in percent of one core (200 = both cores of a 2-core machine). */
export interface CpuUse {
  /** The bench process (load generators, all threads). */
  clientPct: number;
  /** The server process under test. */
  serverPct: number | null;
}

/** Starts measuring; the returned function gives the CPU use since then. */
export function cpuMeter(serverPid: number): () => CpuUse {
  const t0 = now();
  const client0 = process.cpuUsage();
  const server0 = processCpuSeconds(serverPid);
  return () => {
    const wallS = (now() - t0) / 1000;
    const client = process.cpuUsage(client0);
    const server1 = processCpuSeconds(serverPid);
    const clientS = (client.user + client.system) / 1e6;
    return {
      clientPct: round((100 * clientS) / wallS, 0),
      serverPct: server0 === null || server1 === null ? null : round((100 * (server1 - server0)) / wallS, 0),
    };
  };
}

/**
 * Seconds the threads of a process spent runnable but waiting for a core (sum over /proc/PID/task/*
 * /schedstat, field 2), or null if unavailable. Growing fast while the process uses little CPU means the
 * machine, not the process, is the bottleneck.
 */
export function processRunQueueWaitSeconds(pid: number): number | null {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').trim().split(' ');
      ns += Number(fields[1] ?? 0);
    }
    return Number.isFinite(ns) ? ns / 1e9 : null;
  } catch {
    return null;
  }
}
