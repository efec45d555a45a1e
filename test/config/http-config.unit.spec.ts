import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../shared/config.js';

describe('configuration: HTTP timeouts and the metrics token', () => {
  it('defaults fit a service behind nginx: idle connections kept 65 s (6 s once stopping), headers within 10 s, a request within 30 s; /metrics open', () => {
    const config = loadConfig({});
    expect(config.http).to.deep.equal({ keepAliveTimeoutMs: 65_000, headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, stopIdleMs: 6000 });
    expect(config.metricsToken).to.equal(null);
  });

  it('reads HTTP_KEEP_ALIVE_TIMEOUT_MS, HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_STOP_IDLE_MS and METRICS_TOKEN', () => {
    const config = loadConfig({
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '75000',
      HTTP_HEADERS_TIMEOUT_MS: '5000',
      HTTP_REQUEST_TIMEOUT_MS: '20000',
      HTTP_STOP_IDLE_MS: '0',
      METRICS_TOKEN: 'a-long-enough-metrics-token',
    });
    expect(config.http).to.deep.equal({ keepAliveTimeoutMs: 75_000, headersTimeoutMs: 5000, requestTimeoutMs: 20_000, stopIdleMs: 0 });
    expect(config.metricsToken).to.equal('a-long-enough-metrics-token');
  });

  it('refuses a headers timeout longer than the request timeout, and malformed values, naming the variable', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '40000' })).to.throw(ConfigError, /HTTP_HEADERS_TIMEOUT_MS must not be longer than HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '65s' })).to.throw(ConfigError, /HTTP_KEEP_ALIVE_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '0' })).to.throw(ConfigError, /HTTP_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ HTTP_STOP_IDLE_MS: '30000' }), 'a grace past the drain').to.throw(ConfigError, /HTTP_STOP_IDLE_MS/);
  });

  it('refuses a short METRICS_TOKEN without echoing it', () => {
    let message = '';
    try {
      loadConfig({ METRICS_TOKEN: 'short secret' });
    } catch (error) {
      expect(error).to.be.instanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).to.include('METRICS_TOKEN');
    expect(message).not.to.include('short secret');
  });
});
