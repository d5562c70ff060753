import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Real MCP servers from node_modules (devDependencies): nothing is downloaded at test time. */
export const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
/** Our own small server whose tool description follows a file (test/fixtures/mcp). */
export const CHANGING = join(ROOT, 'test/fixtures/mcp/changing-server.mjs');

/**
 * Live members of a process group, read from /proc (zombies count only while they are ours to
 * reap: one reparented to init is dead and init's business).
 */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    const [state = '', ppid = '', pgrp = ''] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && (state !== 'Z' || Number(ppid) === process.pid)) out.push(Number(entry));
  }
  return out;
}
