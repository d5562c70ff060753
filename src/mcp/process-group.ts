import { readdirSync, readFileSync } from 'node:fs';

/**
 * Ending a stdio server's whole process group. The server is spawned with `detached: true`,
 * so it leads a group of its own (pgid = its pid) that also holds whatever it started:
 * `npx` → `sh` → `node`, helpers, browsers. Signalling `-pgid` reaches them all, which the
 * SDK's StdioClientTransport (it signals the direct child only) does not.
 */

/** Groups we started and have not seen end; killed synchronously if the gateway exits. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Records a group so that a gateway exit (even an unplanned `process.exit`) still ends it. */
export function trackGroup(pgid: number): void {
  liveGroups.add(pgid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // Last resort only: the pool's close() is the orderly path. 'exit' handlers must be sync.
    process.on('exit', () => {
      for (const group of liveGroups) signalGroup(group, 'SIGKILL');
    });
  }
}

/** Sends a signal to every process of the group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    // EPERM means it exists but is not ours to signal: still alive for our purposes.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether a live process is still in the group. Zombies do not count: ours are reaped by
 * libuv at once, and grandchildren reparented to init are init's to reap (some inits take
 * a second or more; in a container, run with an init such as tini).
 */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const live = liveMembers(pgid);
  return live === undefined || live > 0;
}

/** Non-zombie processes of the group, from /proc; undefined where there is no /proc. */
function liveMembers(pgid: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  let live = 0;
  for (const entry of entries) {
    if (entry.charCodeAt(0) > 57) continue; // not a pid
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …"; comm may contain spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
    if (Number(pgrp) === pgid && state !== 'Z') live++;
  }
  return live;
}

// There is no event for "a process group became empty" (grandchildren are not ours to wait
// for), so this one place polls, briefly and with a bound.
const POLL_MS = 20;

async function waitGroupGone(pgid: number, withinMs: number): Promise<boolean> {
  const until = Date.now() + withinMs;
  while (groupAlive(pgid)) {
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

/** How ending a group went. */
export interface GroupEnd {
  /** SIGKILL was needed after the grace period. */
  forced: boolean;
  /** Something was still in the group when we gave up waiting (should not happen). */
  lingering: boolean;
}

/**
 * SIGTERM to the whole group, SIGKILL to what is left after `graceMs`, then waits (bounded)
 * until the group is empty, so that no child, grandchild or zombie of ours remains.
 */
export async function endGroup(pgid: number, graceMs: number): Promise<GroupEnd> {
  let forced = false;
  if (signalGroup(pgid, 'SIGTERM') && !(await waitGroupGone(pgid, graceMs))) {
    forced = signalGroup(pgid, 'SIGKILL');
  }
  const gone = await waitGroupGone(pgid, Math.max(graceMs, 2000));
  if (gone) liveGroups.delete(pgid);
  return { forced, lingering: !gone };
}
