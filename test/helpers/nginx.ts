import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './server-process.js';

const BINARIES = ['/usr/sbin/nginx', 'nginx'];

/**
 * A private nginx (Debian's package) in front of the given upstreams: plain round robin, no
 * stickiness, streaming responses unbuffered. One process (no master, no daemon), ended by its
 * PID. Each response names the replica that served it (`X-Upstream`), and so does the access log. Missing binary is an error,
 * never a skip: CI installs it (.ci/run).
 */
export class TestNginx {
  private constructor(
    readonly url: string,
    private readonly proc: ChildProcess,
    private readonly dir: string,
  ) {}

  static async start(upstreams: string[]): Promise<TestNginx> {
    const bin = BINARIES.find((b) => !spawnSync(b, ['-v']).error);
    if (!bin) throw new Error('nginx is not installed: apt-get install -y --no-install-recommends nginx-light');
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-nginx-'));
    const port = await freePort();
    const servers = upstreams.map((u) => `    server ${new URL(u).host} max_fails=1 fail_timeout=10s;`).join('\n');
    writeFileSync(
      join(dir, 'nginx.conf'),
      `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 512; }
http {
  log_format upstream '$upstream_addr|$request_method|$uri|$status';
  access_log ${dir}/access.log upstream;
  client_body_temp_path ${dir}/body; proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi; uwsgi_temp_path ${dir}/uwsgi; scgi_temp_path ${dir}/scgi;
  upstream toolgate {
${servers}
  }
  server {
    listen 127.0.0.1:${port};
    proxy_http_version 1.1;
    proxy_set_header Connection "";
    proxy_set_header Host $host;
    proxy_buffering off;
    proxy_read_timeout 1h;
    proxy_next_upstream error timeout;
    add_header X-Upstream $upstream_addr always;   # which replica served it (tests read it)
    location / { proxy_pass http://toolgate; }
  }
}
`,
    );
    const proc = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = `http://127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (proc.exitCode !== null) break;
      if (await fetch(`${url}/healthz`).then(() => true, () => false)) return new TestNginx(url, proc, dir);
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
  }

  /** The access log: one `{ upstream, method, uri, status }` per request served. */
  log(): { upstream: string; method: string; uri: string; status: number }[] {
    return readFileSync(join(this.dir, 'access.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [upstream = '', method = '', uri = '', status = '0'] = line.split('|');
        return { upstream, method, uri, status: Number(status) };
      });
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    await exited;
  }
}
