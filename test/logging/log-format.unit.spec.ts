import { expect } from 'chai';
import { Writable } from 'node:stream';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { createLogger, defaultLogFormat } from '../../shared/logger.js';
import { describeStartupError } from '../../shared/startup-error.js';

function systemError(message: string, fields: Record<string, unknown>): Error {
  return Object.assign(new Error(message), fields);
}

describe('logs for people and for machines', () => {
  it('LOG_FORMAT picks json or pretty; unset, a terminal gets pretty lines and anything else JSON', () => {
    expect(loadConfig({ LOG_FORMAT: 'json' }).logFormat).to.equal('json');
    expect(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat).to.equal('pretty');
    expect(defaultLogFormat({ isTTY: true })).to.equal('pretty');
    expect(defaultLogFormat({ isTTY: false })).to.equal('json');
    expect(defaultLogFormat({})).to.equal('json');
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).to.throw(ConfigError, /LOG_FORMAT must be one of json, pretty/);
  });

  it('a start-up failure a newcomer can cause is one line saying what to do, with no stack', () => {
    const lines = [
      describeStartupError(systemError('listen EADDRINUSE: address already in use 127.0.0.1:8080', { code: 'EADDRINUSE', syscall: 'listen', address: '127.0.0.1', port: 8080 })),
      describeStartupError(systemError("EACCES: permission denied, mkdir '/srv/var/outbox'", { code: 'EACCES', syscall: 'mkdir', path: '/srv/var/outbox' })),
      describeStartupError(new ConfigError('PORT must be an integer from 0 to 65535')),
      describeStartupError(systemError('listen EACCES: permission denied 0.0.0.0:80', { code: 'EACCES', syscall: 'listen', address: '0.0.0.0', port: 80 })),
    ];
    expect(lines[0]).to.equal('port 8080 on 127.0.0.1 is already in use: stop what listens there, or set PORT to a free port');
    expect(lines[1]).to.match(/^cannot write \/srv\/var\/outbox: .*GUESTPASS_DATA_DIR/);
    expect(lines[2]).to.match(/^PORT must be an integer from 0 to 65535 \(fix the variable/);
    expect(lines[3]).to.match(/may not listen on port 80: use a port above 1023/);
    for (const line of lines) expect(line).not.to.match(/\n|\bat \S+ \(/);
  });

  it('anything else is its message alone', () => {
    expect(describeStartupError(new Error('cannot connect to the database'))).to.equal('cannot connect to the database');
    expect(describeStartupError('odd')).to.equal('odd');
  });
});

describe('a log line', () => {
  function capture(format: 'json' | 'pretty') {
    let out = '';
    const sink = new Writable({ write: (chunk: Buffer, _enc, done) => void ((out += chunk.toString('utf8')), done()) });
    const logger = createLogger('info', 'projections', format, sink);
    logger.child({ component: 'pass-delivery' }).info({ body: { client_secret: 's3cret-value' }, batch: 3 }, 'caught up');
    return () => out;
  }

  it('pretty: time, level, component and message on one line, the secrets redacted as in JSON', () => {
    const out = capture('pretty')();
    expect(out).to.match(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: pass-delivery: caught up \{.*"batch":3/);
    expect(out.trimEnd().split('\n')).to.have.length(1);
    expect(out).not.to.include('s3cret-value');
    expect(out).not.to.include('"level"');
  });

  it('json: one pino object per line, the secrets redacted', () => {
    const line = JSON.parse(capture('json')()) as Record<string, unknown>;
    expect(line).to.include({ level: 30, name: 'projections', component: 'pass-delivery', msg: 'caught up', batch: 3 });
    expect(line.body).to.deep.equal({ client_secret: '[redacted]' });
  });
});
