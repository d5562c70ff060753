import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type AddressInfo } from 'node:net';

/** A free TCP port on 127.0.0.1 (bound, read, released). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** One PING over a raw socket: true when the server answers +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = createConnection({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/**
 * A private redis-server (Debian's package) on a free loopback port, no persistence. Missing
 * binary is an error, never a skip: CI installs it (.ci/run).
 */
export class TestRedis {
  private proc: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    /** With a directory, every write is fsynced to an AOF there, so data survives a SIGKILL. */
    private readonly persistDir?: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  static async start(opts: { persistDir?: string } = {}): Promise<TestRedis> {
    if (spawnSync('redis-server', ['--version']).error) {
      throw new Error('redis-server is not installed: apt-get install -y --no-install-recommends redis-server');
    }
    const r = new TestRedis(await freePort(), opts.persistDir);
    await r.restart();
    return r;
  }

  /** Starts (again) on the same port and waits until it answers PING. */
  async restart(): Promise<void> {
    if (this.proc) throw new Error('redis-server is already running');
    const persist = this.persistDir ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', this.persistDir] : ['--appendonly', 'no'];
    const proc = spawn('redis-server', ['--port', String(this.port), '--save', '', ...persist, '--bind', '127.0.0.1'], { stdio: 'ignore' });
    this.proc = proc;
    for (let i = 0; i < 200; i++) {
      if (proc.exitCode !== null) throw new Error(`redis-server exited with ${proc.exitCode}`);
      if (await ping(this.port)) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server did not answer PING on port ${this.port}`);
  }

  /** SIGSTOP: the connection stays open but nothing answers (a Redis that hangs). */
  pause(): void {
    if (this.proc?.pid !== undefined) process.kill(this.proc.pid, 'SIGSTOP');
  }

  resume(): void {
    if (this.proc?.pid !== undefined) process.kill(this.proc.pid, 'SIGCONT');
  }

  /** SIGKILL (a crash) by default, SIGTERM for a clean stop; resolves when the process is gone. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = undefined;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    if (proc.pid !== undefined) {
      process.kill(proc.pid, signal);
      if (signal !== 'SIGKILL') process.kill(proc.pid, 'SIGCONT'); // a paused server handles SIGTERM only once resumed
    }
    await gone;
  }
}
