import { readdirSync, readFileSync } from 'node:fs';
import { now, round } from './stats.ts';

/** Linux reports utime/stime in clock ticks; USER_HZ is 100 on every mainstream kernel. */
const TICKS_PER_SECOND = 100;

/** user+system CPU seconds of a process (all its threads) from /proc; null if unavailable. */
export function processCpuSeconds(pid: number): number | null {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** user+system CPU seconds of one thread of a process (tid = pid: its main thread); null if unavailable. */
export function threadCpuSeconds(pid: number, tid: number): number | null {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`);
}

function statCpuSeconds(path: string): number | null {
  try {
    const stat = readFileSync(path, 'utf8');
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

/** CPU seconds since a start, of this process (the client) and of the server's processes. */
export interface CpuSeconds {
  wallS: number;
  clientS: number;
  /** null when no server process could be read at the start or at the end. */
  serverS: number | null;
}

/**
 * Starts measuring; the returned function gives the CPU seconds since then. `serverPids` is asked at both
 * ends: a process started meanwhile counts from zero, one that ended meanwhile is missed.
 */
export function cpuSince(serverPids: () => readonly number[]): () => CpuSeconds {
  const read = (): Map<number, number> => {
    const seconds = new Map<number, number>();
    for (const pid of serverPids()) {
      const s = processCpuSeconds(pid);
      if (s !== null) seconds.set(pid, s);
    }
    return seconds;
  };
  const t0 = now();
  const client0 = process.cpuUsage();
  const server0 = read();
  return () => {
    const server1 = read();
    let serverS = 0;
    for (const [pid, s] of server1) serverS += s - (server0.get(pid) ?? 0);
    const client = process.cpuUsage(client0);
    return {
      wallS: (now() - t0) / 1000,
      clientS: (client.user + client.system) / 1e6,
      serverS: server0.size > 0 && server1.size > 0 ? serverS : null,
    };
  };
}

/** Starts measuring; the returned function gives the CPU use since then. */
export function cpuMeter(serverPid: number): () => CpuUse {
  const since = cpuSince(() => [serverPid]);
  return () => {
    const { wallS, clientS, serverS } = since();
    return {
      clientPct: round((100 * clientS) / wallS, 0),
      serverPct: serverS === null ? null : round((100 * serverS) / wallS, 0),
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
