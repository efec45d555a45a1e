// bench/audit.ts's measured process: `audit verify` of FILE with KEYS, timing the verification
// alone and sampling the process's resident memory meanwhile (the TypeScript loader's own memory
// is counted apart: a production install runs the build). Then the floor on the same machine at
// the same moment: the same file read the same way and each line SHA-256'd whole, nothing else
// (what no single-threaded verifier of this format can beat). Prints one JSON line.
import { hash } from 'node:crypto';
import { loadKeySet, verifyExportFile } from '../cli/audit-verify.js';
import { forEachChunk, linesOf } from '../cli/file-lines.js';

const [file, keys] = process.argv.slice(2) as [string, string];
const baseline = process.memoryUsage.rss();
let peak = baseline;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
const started = performance.now();
const result = await verifyExportFile(file, { keys: await loadKeySet(keys), trustedHead: null, organization: false, progress: false });
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage.rss());
const floorStarted = performance.now();
let lines = 0;
await forEachChunk(file, (chunk) => {
  for (const line of linesOf(chunk)) {
    hash('sha256', line, 'buffer');
    lines++;
  }
});
const floorSeconds = (performance.now() - floorStarted) / 1000;
process.stdout.write(JSON.stringify({ verified: result.ok, events: result.events, seconds, floorSeconds, lines, baselineMb: baseline / 2 ** 20, peakMb: peak / 2 ** 20, failure: result.failure }) + '\n');
