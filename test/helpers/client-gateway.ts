import { expect } from 'vitest';
import { echoTool, startGateway, type TestGateway } from './app.js';
import type { DriverReport, DriverResult } from './clients.js';

/** The keys of the third-party client tests: agent-1 sees every tool, agent-2 only `debug.*`, ops approves. */
export const KEYS = { agent: 'clients-agent-key-0001', limited: 'clients-limited-key-0002', ops: 'clients-ops-key-0003' };
export const ALL_TOOLS = ['debug.echo', 'files.delete', 'ops.wipe'];

/**
 * A listening gateway (127.0.0.1) for real MCP clients: a builtin tool, two gated ones (`confirm`
 * from `destructive`); `files.*` may be approved by the client's user through elicitation, `ops.*' only over REST.
 */
export async function startClientGateway(): Promise<{ gw: TestGateway; base: string }> {
  const gw = await startGateway({
    config: {
      auth: {
        keys: [
          { id: 'agent-1', key: KEYS.agent, roles: ['agent'] },
          { id: 'agent-2', key: KEYS.limited, roles: ['agent'], tools: ['debug.*'] },
          { id: 'ops', key: KEYS.ops, roles: ['approver'] },
        ],
      },
      // Canonical names listed (mcp.toolNames): the drivers call by them; provider names are mcp-tool-names*.test.ts's subject.
      mcp: { toolNames: 'canonical', elicitApproval: { tools: ['files.*'] } },
    },
    tools: {
      'echo.yaml': echoTool('debug.echo', { inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } }),
      'delete.yaml': { ...echoTool('files.delete', { description: 'delete a file' }), sideEffect: 'destructive' },
      'wipe.yaml': { ...echoTool('ops.wipe', { description: 'wipe a volume' }), sideEffect: 'destructive' },
    },
  });
  const base = await gw.app.listen({ port: 0, host: '127.0.0.1' });
  return { gw, base };
}

/** A report without a driver error (the error text in full when there is one). */
export function ok(report: DriverReport): DriverReport {
  expect(report.error, report.error).toBeUndefined();
  return report;
}

export function resultOf(report: DriverReport, i: number): DriverResult {
  const r = report.results[i];
  if (!r) throw new Error(`no result ${i} in ${JSON.stringify(report)}`);
  return r;
}

/** The echo tool answered with the message, and the call is in the audit log as agent-1's. */
export async function expectEchoed(gw: TestGateway, r: DriverResult, message: string): Promise<void> {
  expect(r.isError).toBe(false);
  expect(JSON.parse(r.text)).toEqual({ message });
  const rec = (await gw.audit()).find((a) => a['event'] === 'call' && a['tool'] === 'debug.echo' && (a['args'] as { message?: string })?.message === message);
  expect(rec).toMatchObject({ caller: 'agent-1', outcome: 'ok' });
}

/**
 * A gated call that did not run: its text names a pending confirmation, which an approver sees over
 * REST with the caller and arguments and approves there, and the call then runs (its result as the tool's).
 */
export async function expectPendingThenApproved(gw: TestGateway, r: DriverResult, tool: string, args: Record<string, unknown>): Promise<void> {
  expect(r.isError).toBe(false);
  expect(r.text).toMatch(new RegExp(`this call of '${tool.replace('.', '\\.')}' needs a person's approval`));
  const id = /confirmation (cf_[A-Za-z0-9_-]+)/.exec(r.text)?.[1];
  expect(id, r.text).toBeDefined();
  const auth = { authorization: `Bearer ${KEYS.ops}` };
  const seen = await gw.app.inject({ method: 'GET', url: `/v1/confirmations/${id}`, headers: auth });
  expect(seen.statusCode).toBe(200);
  expect(seen.json()).toMatchObject({ status: 'pending', tool, caller: 'agent-1', arguments: args });
  const pendingRec = (await gw.audit()).find((a) => a['event'] === 'call' && a['confirmationId'] === id);
  expect(pendingRec).toMatchObject({ tool, caller: 'agent-1', outcome: 'pending_confirmation' });
  const approved = await gw.app.inject({ method: 'POST', url: `/v1/confirmations/${id}/approve`, headers: auth, payload: {} });
  expect(approved.statusCode).toBe(200);
  expect(approved.json()).toMatchObject({ status: 'ok', approver: 'ops' });
}

/**
 * A gated call the client's user approved through elicitation: asked once, naming the tool and its
 * arguments; it ran (the tool's own result) and the audit says who decided.
 */
export async function expectElicitedAndRan(gw: TestGateway, report: DriverReport, r: DriverResult, args: { path: string }): Promise<void> {
  expect(report.elicited.filter((m) => m.includes(args.path))).toHaveLength(1);
  expect(report.elicited.find((m) => m.includes(args.path))).toMatch(/files\.delete/);
  expect(r.isError).toBe(false);
  expect(JSON.parse(r.text)).toEqual(args);
  const audit = await gw.audit();
  const approved = audit.find((a) => a['event'] === 'confirmation' && a['outcome'] === 'approved' && (a['args'] as { path?: string })?.path === args.path);
  expect(approved).toMatchObject({ tool: 'files.delete', caller: 'agent-1', approver: expect.stringMatching(/^mcp-.*agent-1$/) });
  const ran = audit.find((a) => a['event'] === 'call' && a['confirmationId'] === approved?.['confirmationId'] && a['outcome'] === 'ok');
  expect(ran).toMatchObject({ tool: 'files.delete', caller: 'agent-1' });
}

/**
 * A gated call the client's user declined through elicitation: an error result saying so, the
 * confirmation rejected (audited with who decided), and the tool never ran.
 */
export async function expectDeclined(gw: TestGateway, report: DriverReport, r: DriverResult, args: { path: string }): Promise<void> {
  expect(report.elicited.filter((m) => m.includes(args.path))).toHaveLength(1);
  expect(r.isError).toBe(true);
  expect(r.text).toMatch(/declined this call of 'files\.delete' \(confirmation cf_[A-Za-z0-9_-]+\); it was not run/);
  const audit = (await gw.audit()).filter((a) => (a['args'] as { path?: string } | undefined)?.path === args.path);
  expect(audit.find((a) => a['event'] === 'confirmation')).toMatchObject({ outcome: 'rejected', tool: 'files.delete', caller: 'agent-1', approver: expect.stringMatching(/^mcp-.*agent-1$/) });
  expect(audit.filter((a) => a['outcome'] === 'ok')).toEqual([]);
}

/** What a client shows for a key the gateway does not know: the gateway's 401 words, and no tools. */
export function expectRefusedKey(report: DriverReport): void {
  expect(report.tools).toBeUndefined();
  expect(report.error).toMatch(/unknown API key|did not accept the credentials/);
}
