// A CPU profile of this process over a chosen window (a bench's measured seconds, not its start-up
// or warm-up), written as a .cpuprofile that Chrome DevTools and `npx tsx bench/cpu-profile-summary.ts` read.
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';

/** Starts profiling now; the function returned stops and writes the profile to `file`. */
export async function startCpuProfile(file: string, samplingIntervalUs = 200): Promise<() => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await writeFile(file, JSON.stringify(profile));
  };
}
