// docker-compose.yml publishes the gateway to the network and nothing else: PostgreSQL (password
// in the file), Mosquitto (anonymous, no TLS) and EventStoreDB (insecure mode) would otherwise be
// open to anyone who reaches the host. A published port other than the gateway's is bound to the
// host's loopback.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

const composeFile = fileURLToPath(new URL('../../docker-compose.yml', import.meta.url));

/** Each service's published ports, from the file's `ports:` lines (flow or block lists). */
function publishedPorts(text: string): Array<{ service: string; port: string }> {
  const out: Array<{ service: string; port: string }> = [];
  let service = '';
  let inBlock = false;
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    const named = /^ {2}([A-Za-z0-9_-]+):\s*$/.exec(line);
    if (named) service = named[1]!;
    const flow = /^\s+ports:\s*\[(.*)\]/.exec(line);
    if (flow) for (const entry of flow[1]!.split(',')) out.push({ service, port: entry.trim().replace(/^["']|["']$/g, '') });
    if (/^\s+ports:\s*$/.test(line)) {
      inBlock = true;
      continue;
    }
    const item = inBlock ? /^\s+-\s*["']?([^"'\s]+)["']?\s*$/.exec(line) : null;
    if (item) out.push({ service, port: item[1]! });
    else inBlock = false;
  }
  return out;
}

describe('docker-compose.yml', () => {
  it('publishes only the gateway beyond the host; every other published port is on 127.0.0.1', () => {
    const ports = publishedPorts(readFileSync(composeFile, 'utf8'));
    expect(ports.filter((p) => p.service === 'gateway'), 'the gateway').to.have.length(1);
    const open = ports.filter((p) => p.service !== 'gateway' && !p.port.startsWith('127.0.0.1:'));
    expect(open, 'ports open to the network').to.deep.equal([]);
    expect(ports.map((p) => p.service)).not.to.include('eventstore');
  });

  it('reads flow and block lists of ports (the check itself)', () => {
    const sample = ['services:', '  db:', '    ports: ["5432:5432", "127.0.0.1:1:1"]', '  mq:', '    ports:', '      - "1883:1883"', '    image: x'].join('\n');
    expect(publishedPorts(sample)).to.deep.equal([
      { service: 'db', port: '5432:5432' },
      { service: 'db', port: '127.0.0.1:1:1' },
      { service: 'mq', port: '1883:1883' },
    ]);
  });
});
