// The embedded MQTT broker's URL file in the data folder, as the door CLI of another terminal finds it.
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { embeddedBrokerUrlFile, startEmbeddedBroker } from '../../door-gateway/embedded-broker.js';

const BROKER_MODULE = fileURLToPath(new URL('../../door-gateway/embedded-broker.ts', import.meta.url));

/** Runs `script` (an ES module body with `start` imported) in a node process of its own; resolves with its exit code. */
function runNode(script: string): Promise<number | null> {
  const source = `import { startEmbeddedBroker as start } from ${JSON.stringify(BROKER_MODULE)};\n${script}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', source], { stdio: ['ignore', 'ignore', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  });
}

describe('embedded MQTT broker URL file', function () {
  this.timeout(30_000);
  let dataDir: string;

  beforeEach(() => (dataDir = mkdtempSync(path.join(os.tmpdir(), 'gp-broker-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('is gone after a process exits without closing its broker (another handler of Ctrl-C exits first)', async () => {
    const code = await runNode(`
      await start({ dataDir: ${JSON.stringify(dataDir)} });
      if (!(await import('node:fs')).existsSync(${JSON.stringify(embeddedBrokerUrlFile(dataDir))})) process.exit(3);
      process.exit(0);`);
    expect(code, 'the file was written while the broker ran').to.equal(0);
    expect(existsSync(embeddedBrokerUrlFile(dataDir))).to.equal(false);
  });

  it("leaves the file alone once another broker has written its own there (a new start in the same folder)", async () => {
    const first = await startEmbeddedBroker({ dataDir });
    const second = await startEmbeddedBroker({ dataDir });
    await first.close();
    expect(readFileSync(embeddedBrokerUrlFile(dataDir), 'utf8').trim()).to.equal(second.url);
    const code = await runNode(`
      const broker = await start({ dataDir: ${JSON.stringify(dataDir)} });
      (await import('node:fs')).writeFileSync(${JSON.stringify(embeddedBrokerUrlFile(dataDir))}, 'mqtt://127.0.0.1:1\\n');
      process.exit(0);`);
    expect(code).to.equal(0);
    expect(readFileSync(embeddedBrokerUrlFile(dataDir), 'utf8').trim()).to.equal('mqtt://127.0.0.1:1');
    await second.close();
  });

  it('stays while the broker runs and goes when it is closed', async () => {
    const broker = await startEmbeddedBroker({ dataDir });
    expect(existsSync(embeddedBrokerUrlFile(dataDir))).to.equal(true);
    await broker.close();
    expect(existsSync(embeddedBrokerUrlFile(dataDir))).to.equal(false);
  });
});
