// Child processes for the benches: spawn, wait until ready, read RSS, stop by PID (never by name).
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A port that was free a moment ago on 127.0.0.1 (for children that take PORT from the env). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const children = new Set();

/**
 * Spawns `node ...args`. stdout and stderr are kept (last 64 KiB) for error messages; `onLine`
 * sees every stdout/stderr line. Returns { child, pid, output(), exited }.
 */
export function spawnNode(args, { env = {}, onLine } = {}) {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let out = '';
  const feed = (stream) => {
    let buf = '';
    stream.setEncoding('utf8');
    stream.on('data', (d) => {
      out = (out + d).slice(-65536);
      buf += d;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        onLine?.(line);
      }
    });
  };
  feed(child.stdout);
  feed(child.stderr);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => {
    children.delete(child);
    resolve({ code, signal });
  }));
  return { child, pid: child.pid, output: () => out, exited };
}

/**
 * Spawns a bench server script that prints `READY <port>` once listening on 127.0.0.1.
 * Returns the handle with `port` and `url`.
 */
export async function spawnServer(script, { env = {}, args = [], nodeArgs = [], timeoutMs = 15_000 } = {}) {
  let ready;
  const portP = new Promise((resolve) => (ready = resolve));
  const h = spawnNode([...nodeArgs, script, ...args], {
    env,
    onLine: (line) => {
      const m = /^READY (\d+)$/.exec(line.trim());
      if (m) ready(Number(m[1]));
    },
  });
  const port = await Promise.race([
    portP,
    h.exited.then((e) => Promise.reject(new Error(`${script} exited (${e.code ?? e.signal}) before it was ready:\n${h.output()}`))),
    delay(timeoutMs).then(() => Promise.reject(new Error(`${script} not ready in ${timeoutMs} ms:\n${h.output()}`))),
  ]);
  return { ...h, port, url: `http://127.0.0.1:${port}` };
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process has exited. */
export async function stop(h, graceMs = 15_000) {
  if (h.child.exitCode !== null || h.child.signalCode !== null) return h.exited;
  try {
    process.kill(h.pid, 'SIGTERM');
  } catch {
    return h.exited;
  }
  const t = setTimeout(() => {
    try {
      process.kill(h.pid, 'SIGKILL');
    } catch {}
  }, graceMs);
  const r = await h.exited;
  clearTimeout(t);
  return r;
}

/** Kills (by PID) every child this process spawned that is still running: for error paths. */
export function killAll() {
  for (const c of children) {
    try {
      process.kill(c.pid, 'SIGKILL');
    } catch {}
  }
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });
}

/** Resident set size of a process in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

export const delay = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU time (user + system) a process has used so far, in ms, from /proc/<pid>/stat (100 ticks/s). */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime (fields 14 and 15)
}

/**
 * Per-thread scheduler figures of a process, from /proc/<pid>/task/<tid>/{comm,schedstat,status}:
 * Map(tid → { name, cpuNs (on a CPU), waitNs (runnable, waiting for one), switches, involuntary }).
 */
export function threadStats(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const dir = `/proc/${pid}/task/${tid}`;
      const [cpuNs, waitNs] = readFileSync(`${dir}/schedstat`, 'utf8').trim().split(' ').map(Number);
      const status = readFileSync(`${dir}/status`, 'utf8');
      const num = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
      out.set(tid, { name: readFileSync(`${dir}/comm`, 'utf8').trim(), cpuNs, waitNs, switches: num('voluntary_ctxt_switches'), involuntary: num('nonvoluntary_ctxt_switches') });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** What each thread (main thread first, then by name) did between two threadStats() of one process. */
export function threadDelta(before, after, pid) {
  const rows = [];
  for (const [tid, a] of after) {
    const b = before.get(tid) ?? { cpuNs: 0, waitNs: 0, switches: 0, involuntary: 0 };
    rows.push({ tid, main: tid === String(pid), name: a.name, cpuNs: a.cpuNs - b.cpuNs, waitNs: a.waitNs - b.waitNs, switches: a.switches - b.switches, involuntary: a.involuntary - b.involuntary });
  }
  return rows.sort((x, y) => Number(y.main) - Number(x.main) || x.name.localeCompare(y.name));
}
