// nginx from the machine (Debian's package; .ci/nginx.sh installs it) run with the project's own
// gateway configuration: deploy/gateway.nginx.conf rendered by deploy/render-gateway.sh, exactly
// as docker-compose renders it, inside a main configuration of the test's own (pid, temp folders
// and logs in the run's folder, so it needs no root), with a certificate made by
// deploy/self-signed-certificate.sh.
import { execFile, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tcpReachable } from '../../support/components.js';
import { ServiceProcess, waitUntil } from './service-process.js';

const run = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const TEMPLATE = path.join(ROOT, 'deploy/gateway.nginx.conf');
const RENDER = path.join(ROOT, 'deploy/render-gateway.sh');
const CERTIFICATE = path.join(ROOT, 'deploy/self-signed-certificate.sh');

/** NGINX_PATH, else `nginx` on PATH, else Debian's /usr/sbin/nginx; null when there is none. */
export function nginxBinary(): string | null {
  const named = process.env.NGINX_PATH?.trim();
  if (named) return existsSync(named) ? named : null;
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/local/sbin']) {
    if (dir && existsSync(path.join(dir, 'nginx'))) return path.join(dir, 'nginx');
  }
  return null;
}

export interface GatewayCertificate {
  readonly dir: string;
  /** The self-signed certificate, the one trust anchor a client needs. */
  readonly ca: Buffer;
}

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl. */
export async function makeCertificate(dir: string): Promise<GatewayCertificate> {
  try {
    await run('sh', [CERTIFICATE, dir], { timeout: 20_000 });
  } catch (error) {
    throw new Error(`openssl could not make the gateway's certificate: ${(error as { stderr?: string }).stderr || (error as Error).message}`);
  }
  return { dir, ca: await readFile(path.join(dir, 'gateway.crt')) };
}

export interface GatewayOptions {
  readonly binary: string;
  /** The gateway's folder: rendered configuration, pid, temp folders. */
  readonly dir: string;
  readonly logFile: string;
  readonly port: number;
  readonly certificate: GatewayCertificate;
  readonly commandUpstreams: readonly string[];
  readonly queryUpstreams: readonly string[];
  /** GATEWAY_TRUSTED_PROXIES: terminators in front whose X-Forwarded-For is believed. */
  readonly trustedProxies?: readonly string[];
  /** nginx worker processes (default: one per core). */
  readonly workers?: number | 'auto';
}

/** Renders deploy/gateway.nginx.conf with deploy/render-gateway.sh; fails with the script's message. */
export async function renderGatewayConf(env: Record<string, string>): Promise<string> {
  try {
    const { stdout } = await run('sh', [RENDER, TEMPLATE], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, timeout: 10_000 });
    return stdout;
  } catch (error) {
    throw new Error(`deploy/render-gateway.sh failed: ${(error as { stderr?: string }).stderr || (error as Error).message}`);
  }
}

export class NginxGateway {
  private constructor(
    readonly process: ServiceProcess,
    readonly url: string,
    readonly port: number,
  ) {}

  static async start(options: GatewayOptions): Promise<NginxGateway> {
    const { dir } = options;
    await mkdir(path.join(dir, 'temp'), { recursive: true });
    const gatewayConf = await renderGatewayConf({
      GATEWAY_LISTEN: `127.0.0.1:${options.port}`,
      GATEWAY_TLS_DIR: options.certificate.dir,
      GATEWAY_COMMAND_UPSTREAMS: options.commandUpstreams.join(' '),
      GATEWAY_QUERY_UPSTREAMS: options.queryUpstreams.join(' '),
      GATEWAY_TRUSTED_PROXIES: (options.trustedProxies ?? []).join(' '),
    });
    await writeFile(path.join(dir, 'gateway.conf'), gatewayConf);
    // What the nginx image's own nginx.conf provides around conf.d in docker-compose, with every
    // path in the run's folder (Debian's build puts temp folders under /var/lib/nginx).
    const temp = (name: string) => path.join(dir, 'temp', name);
    await writeFile(
      path.join(dir, 'nginx.conf'),
      [
        `worker_processes ${options.workers ?? 'auto'};`,
        `pid ${path.join(dir, 'nginx.pid')};`,
        'error_log stderr notice;',
        'events { worker_connections 4096; }',
        'http {',
        `  client_body_temp_path ${temp('body')};`,
        `  proxy_temp_path ${temp('proxy')};`,
        `  fastcgi_temp_path ${temp('fastcgi')};`,
        `  uwsgi_temp_path ${temp('uwsgi')};`,
        `  scgi_temp_path ${temp('scgi')};`,
        '  default_type application/octet-stream;',
        '  sendfile on;',
        `  include ${path.join(dir, 'gateway.conf')};`,
        '}',
        '',
      ].join('\n'),
    );
    const args = ['-e', 'stderr', '-p', dir, '-c', path.join(dir, 'nginx.conf')];
    // Its output to a file: the configuration opens /dev/stdout, which a socket (node's pipes) cannot be.
    const checkLog = path.join(dir, 'nginx-t.log');
    const fd = openSync(checkLog, 'w');
    const check = spawnSync(options.binary, [...args, '-t', '-q'], { stdio: ['ignore', fd, fd], timeout: 10_000 });
    closeSync(fd);
    if (check.status !== 0) {
      throw new Error(`nginx refuses the rendered gateway configuration: ${check.error?.message ?? ''}${await readFile(checkLog, 'utf8')}`);
    }
    const proc = new ServiceProcess({
      name: 'nginx',
      command: options.binary,
      args: [...args, '-g', 'daemon off;'],
      env: { PATH: process.env.PATH ?? '' },
      logFile: options.logFile,
    });
    proc.start();
    await waitUntil(
      async () => {
        if (!proc.running) throw new Error(`nginx exited at start:\n${proc.tail()}`);
        return tcpReachable('127.0.0.1', options.port, 200);
      },
      10_000,
      `nginx to listen on 127.0.0.1:${options.port}`,
      50,
    );
    return new NginxGateway(proc, `https://127.0.0.1:${options.port}`, options.port);
  }

  async stop(): Promise<void> {
    await this.process.stop(3000);
  }
}
