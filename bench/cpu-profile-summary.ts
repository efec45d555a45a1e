// Where a .cpuprofile's time went: `npx tsx bench/cpu-profile-summary.ts FILE [--top 40] [--match TEXT]`.
// Prints self time by function and by module (file or package), and inclusive time by module (a
// module counted once per sample however deep it recurs), as shares of all samples. `--match`
// also splits the time under the outermost frame containing TEXT by the frame it called.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: cpu-profile-summary.ts FILE [--top N] [--match TEXT]');
const at = (name: string) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : undefined);
const TOP = Number(at('--top') ?? 40);
const MATCH = at('--match');

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** A package name, or the project's file path, or V8's own label ((garbage collector), (program)). */
function moduleOf(node: ProfileNode): string {
  const url = node.callFrame.url;
  if (!url) return node.callFrame.functionName.startsWith('(') ? node.callFrame.functionName : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url;
  const main = url.indexOf('/work/main/');
  return main >= 0 ? url.slice(main + '/work/main/'.length) : url;
}

function label(node: ProfileNode): string {
  return `${node.callFrame.functionName || '(anonymous)'} ${moduleOf(node)}:${node.callFrame.lineNumber + 1}`;
}

const total = profile.samples.length;
const selfFn = new Map<string, number>();
const selfModule = new Map<string, number>();
const inclusiveModule = new Map<string, number>();
const stacks = new Map<string, number>();
for (const id of profile.samples) {
  const leaf = byId.get(id)!;
  selfFn.set(label(leaf), (selfFn.get(label(leaf)) ?? 0) + 1);
  selfModule.set(moduleOf(leaf), (selfModule.get(moduleOf(leaf)) ?? 0) + 1);
  const seen = new Set<string>();
  const frames: string[] = [];
  for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
    const node = byId.get(n)!;
    seen.add(moduleOf(node));
    frames.push(label(node));
  }
  for (const m of seen) inclusiveModule.set(m, (inclusiveModule.get(m) ?? 0) + 1);
  const outermost = MATCH ? frames.findLastIndex((f) => f.includes(MATCH)) : -1;
  if (outermost >= 0) {
    const key = outermost === 0 ? `(self) ${frames[0]}` : `${frames[outermost]}  ->  ${frames[outermost - 1]}`;
    stacks.set(key, (stacks.get(key) ?? 0) + 1);
  }
}

const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)} %`;
function print(title: string, counts: Map<string, number>, top = TOP): void {
  console.log(`\n${title}`);
  for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(n)}  ${name}`);
}
const ms = profile.timeDeltas.reduce((a, b) => a + b, 0) / 1000;
console.log(`${file}: ${total} samples over ${ms.toFixed(0)} ms`);
print('self time by module', selfModule);
print('inclusive time by module', inclusiveModule);
print('self time by function', selfFn);
if (MATCH) print(`under "${MATCH}", by callee (total ${pct([...stacks.values()].reduce((a, b) => a + b, 0))})`, stacks);
