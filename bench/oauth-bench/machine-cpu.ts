// CPU the bench cannot ask a process for: PostgreSQL's backends (by pid, from /proc) and the whole
// machine's (from /proc/stat). Linux only; elsewhere nothing is found and the figures read null.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSecond: number | null = null;

function clockTicks(): number {
  if (ticksPerSecond === null) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses):
 * state [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14]. Throws when the process is not there.
 */
export function procStat(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Seconds of CPU that /proc counts in clock ticks. */
export function ticksToSeconds(ticks: number): number {
  return ticks / clockTicks();
}

/** CPU seconds used so far by each of `pids` that is still running (from /proc/<pid>/stat). */
export function processCpuSeconds(pids: readonly number[]): Map<number, number> {
  const seconds = new Map<number, number>();
  for (const pid of pids) {
    let fields: string[];
    try {
      fields = procStat(pid);
    } catch {
      continue; // not here (exited, or a database server on another machine)
    }
    seconds.set(pid, ticksToSeconds(Number(fields[11]) + Number(fields[12])));
  }
  return seconds;
}

/** Busy and total CPU seconds of the machine so far (all cores), or null without /proc/stat. */
export function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    const total = values.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0); // idle + iowait
    return { busy: (total - idle) / clockTicks(), total: total / clockTicks() };
  } catch {
    return null;
  }
}
