// bench/audit.ts's measured process: `audit verify` of FILE with KEYS, timing the verification
// alone and sampling the process's resident memory meanwhile (the TypeScript loader's own memory
// is counted apart: a production install runs the build). Prints one JSON line.
import { loadKeySet, verifyExportFile } from '../cli/audit-verify.js';

const [file, keys] = process.argv.slice(2) as [string, string];
const baseline = process.memoryUsage.rss();
let peak = baseline;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
const started = performance.now();
const result = await verifyExportFile(file, { keys: await loadKeySet(keys), trustedHead: null, organization: false, progress: false });
const seconds = (performance.now() - started) / 1000;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage.rss());
process.stdout.write(JSON.stringify({ verified: result.ok, events: result.events, seconds, baselineMb: baseline / 2 ** 20, peakMb: peak / 2 ** 20, failure: result.failure }) + '\n');
