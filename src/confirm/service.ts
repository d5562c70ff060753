import { GatewayError } from '../errors.js';
import { samePerson, type Caller } from '../auth/caller.js';
import { approverIdentityFields, identityFields } from '../audit/identity.js';
import type { AskerSnapshot } from './asker.js';
import { auditRecord } from '../audit/record.js';
import type { AuditSink } from '../audit/types.js';
import type { StateStore } from '../state/types.js';
import { newId } from '../util/ids.js';

/** A call waiting for a decision. `args` are the exact arguments approved; `argsRedacted` is what people see. */
export interface Confirmation {
  id: string;
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  argsRedacted: unknown;
  argsDigest: string;
  caller: string;
  /** A token caller as it asked (roles, tool globs, identity; never its token): the approved call runs as it. */
  asker?: AskerSnapshot;
  sessionId?: string | undefined;
  requestId: string;
  createdAt: string;
  expiresAt: string;
  summary: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired';
  approver?: string;
  decidedAt?: string;
  note?: string;
}

export interface ConfirmationConfig {
  ttlSeconds: number;
  fourEyes: boolean;
}

export type Decision = 'approved' | 'rejected';

const PENDING = 'toolgate:conf:pending';
/** Decided confirmations stay readable this long, so a late decision gets 409/410, not 404. */
const KEEP_AFTER_MS = 24 * 3600 * 1000;

/**
 * Confirmation gates: open a pending confirmation, list those an approver may decide, and decide
 * each exactly once. The decision is claimed atomically (set-if-absent) before anything acts on
 * it, and audited durably, so two approvals run the call once and a crash never runs it twice.
 */
export class Confirmations {
  /** Pending confirmations as last counted (refreshed by every listing and sweep), for the metric. */
  private count = 0;

  constructor(
    private readonly store: StateStore,
    private readonly audit: AuditSink,
    private readonly config: ConfirmationConfig,
    /** Four-eyes needs identities to tell apart: off when the gateway runs without keys. */
    private readonly fourEyes: boolean,
    private readonly now: () => number = Date.now,
  ) {}

  private key(id: string): string {
    return `toolgate:conf:${id}`;
  }

  async open(c: Omit<Confirmation, 'id' | 'createdAt' | 'expiresAt' | 'status'>): Promise<Confirmation> {
    const now = this.now();
    const conf: Confirmation = {
      ...c,
      id: newId('cf'),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + this.config.ttlSeconds * 1000).toISOString(),
      status: 'pending',
    };
    await this.save(conf);
    await this.store.addToSet(PENDING, conf.id);
    this.count++;
    return conf;
  }

  private async save(conf: Confirmation): Promise<void> {
    const ttl = Date.parse(conf.expiresAt) - this.now() + KEEP_AFTER_MS;
    await this.store.set(this.key(conf.id), JSON.stringify(conf), Math.max(ttl, 1000));
  }

  async get(id: string): Promise<Confirmation | undefined> {
    const raw = await this.store.get(this.key(id));
    if (raw === undefined) return undefined;
    const conf = JSON.parse(raw) as Confirmation;
    if (conf.status === 'pending' && Date.parse(conf.expiresAt) <= this.now()) return this.expire(conf);
    return conf;
  }

  /** Pending confirmations, oldest first; expired ones are settled (and audited) on the way. */
  async pending(): Promise<Confirmation[]> {
    const out: Confirmation[] = [];
    for (const id of await this.store.members(PENDING)) {
      const conf = await this.get(id);
      if (conf?.status === 'pending') out.push(conf);
      else await this.store.removeFromSet(PENDING, id);
    }
    this.count = out.length;
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  get pendingCount(): number {
    return this.count;
  }

  /** Settles every confirmation whose expiry has passed. */
  async sweep(): Promise<void> {
    await this.pending();
  }

  /**
   * Whether the confirmation is within the key's tool scope. Outside it, a confirmation does not
   * exist for that key: reads and decisions answer 404, as for an unknown id.
   */
  inScope(reader: Caller, conf: Confirmation): boolean {
    return reader.toolPatterns.some((re) => re.test(conf.tool));
  }

  /** One confirmation as `reader` may see it: undefined when unknown or outside its tool scope. */
  async getFor(id: string, reader: Caller): Promise<Confirmation | undefined> {
    const conf = await this.get(id);
    return conf && this.inScope(reader, conf) ? conf : undefined;
  }

  mayDecide(approver: Caller, conf: Confirmation): string | undefined {
    if (!approver.roles.has('approver')) return 'only keys with the approver role decide confirmations';
    if (this.fourEyes && this.config.fourEyes && samePerson(approver, { id: conf.caller, identity: conf.asker?.identity })) {
      return conf.asker && approver.identity && approver.id !== conf.caller
        ? 'four-eyes: the same person (issuer and subject) asked for this call through another client'
        : 'four-eyes: the caller cannot approve its own call';
    }
    if (!approver.toolPatterns.some((re) => re.test(conf.tool))) return `this approver may not decide calls of '${conf.tool}'`;
    return undefined;
  }

  /** Decides once: 404 unknown (or outside the approver's tool scope), 410 expired, 403 not allowed, 409 already decided. */
  async decide(id: string, approver: Caller, decision: Decision, note?: string): Promise<Confirmation> {
    const conf = await this.getFor(id, approver);
    if (!conf) throw notFound(id);
    if (conf.status === 'expired') throw expired(conf);
    const refused = this.mayDecide(approver, conf);
    if (refused) throw new GatewayError('FORBIDDEN', refused);
    if (conf.status !== 'pending' || !(await this.claim(conf.id, decision))) throw alreadyDecided(conf);
    const decided: Confirmation = { ...conf, status: decision, approver: approver.id, decidedAt: new Date(this.now()).toISOString(), ...(note ? { note } : {}) };
    await this.audit.durable(
      auditRecord({
        event: 'confirmation',
        outcome: decision,
        requestId: conf.requestId,
        callId: conf.callId,
        sessionId: conf.sessionId,
        caller: conf.caller,
        ...identityFields(conf.asker?.identity),
        tool: conf.tool,
        args: conf.argsRedacted,
        argsDigest: conf.argsDigest,
        confirmationId: conf.id,
        approver: approver.id,
        ...approverIdentityFields(approver.identity),
        ...(note ? { note } : {}),
      }),
    );
    await this.save(decided);
    await this.store.removeFromSet(PENDING, conf.id);
    this.count = Math.max(0, this.count - 1);
    return decided;
  }

  private claim(id: string, outcome: string): Promise<boolean> {
    return this.store.setIfAbsent(`${this.key(id)}:decision`, outcome, this.config.ttlSeconds * 1000 + KEEP_AFTER_MS);
  }

  private async expire(conf: Confirmation): Promise<Confirmation> {
    const done: Confirmation = { ...conf, status: 'expired' };
    if (await this.claim(conf.id, 'expired')) {
      await this.audit.durable(
        auditRecord({
          event: 'confirmation',
          outcome: 'expired',
          requestId: conf.requestId,
          callId: conf.callId,
          sessionId: conf.sessionId,
          caller: conf.caller,
          ...identityFields(conf.asker?.identity),
          tool: conf.tool,
          argsDigest: conf.argsDigest,
          confirmationId: conf.id,
        }),
      );
      await this.save(done);
      await this.store.removeFromSet(PENDING, conf.id);
      this.count = Math.max(0, this.count - 1);
      return done;
    }
    const raw = await this.store.get(this.key(conf.id));
    return raw === undefined ? done : (JSON.parse(raw) as Confirmation);
  }
}

export function notFound(id: string): GatewayError {
  return new GatewayError('NOT_FOUND', `no confirmation '${id}'`);
}

function expired(conf: Confirmation): GatewayError {
  return new GatewayError('CONFIRMATION_EXPIRED', `confirmation '${conf.id}' expired at ${conf.expiresAt}`, {
    modelMessage: `The approval for '${conf.tool}' expired before anyone decided. Call the tool again if it is still needed.`,
  });
}

function alreadyDecided(conf: Confirmation): GatewayError {
  return new GatewayError('CONFLICT', `confirmation '${conf.id}' was already decided${conf.status !== 'pending' ? ` (${conf.status})` : ''}`);
}
