import { tokenUrlProblem } from '../../auth/upstream/spec.js';
import { sha256Hex } from '../../util/hash.js';
import type { AuthPlan } from './plan.js';

/**
 * The document's securitySchemes bound to the file's `auth` secrets. An operation's `security`
 * (else the document's) lists alternatives, each a set of schemes used together: the first
 * alternative whose every scheme has a secret (and is one we can send) is used; an empty
 * alternative (`{}`) means the operation may go without credentials.
 */

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A header, query parameter or cookie name an API key may travel in. */
const TOKEN_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a cookie value can carry unquoted (RFC 6265 cookie-octet). */
const COOKIE_VALUE = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]*$/;

export interface SecurityContext {
  /** The file the document came from (oauth2 tokens are shared per file, scheme and scopes). */
  readonly file: string;
  /** `auth` of the kind: openapi file, secrets expanded. */
  readonly secrets: Readonly<Record<string, string>>;
  /** components.securitySchemes of the document. */
  readonly schemes: Rec;
  /** Where relative token URLs are resolved (the base URL). */
  readonly base: string;
}

export type SecurityChoice = { auth: AuthPlan[]; note?: string };

/** The schemes one operation sends, or why it sends none. */
export function chooseSecurity(requirements: unknown, ctx: SecurityContext): SecurityChoice {
  if (!Array.isArray(requirements) || requirements.length === 0) return { auth: [] };
  const reasons: string[] = [];
  let anonymous = false;
  for (const req of requirements) {
    if (!isRec(req)) continue;
    const names = Object.keys(req);
    if (names.length === 0) {
      anonymous = true;
      continue;
    }
    const plans: AuthPlan[] = [];
    for (const name of names) {
      const scopes = Array.isArray(req[name]) ? (req[name] as unknown[]).map(String) : [];
      const made = schemePlan(name, scopes, ctx);
      if (typeof made === 'string') {
        reasons.push(made);
        break;
      }
      plans.push(made);
    }
    if (plans.length !== names.length) continue;
    const clash = clashingHeaders(plans);
    if (clash) {
      reasons.push(clash);
      continue;
    }
    return { auth: plans };
  }
  if (anonymous) return { auth: [] };
  return { auth: [], note: `its security requirements cannot be met, so calls go without credentials: ${[...new Set(reasons)].join('; ')}` };
}

function schemePlan(name: string, scopes: readonly string[], ctx: SecurityContext): AuthPlan | string {
  const scheme = ctx.schemes[name];
  if (!isRec(scheme)) return `securityScheme '${name}' is not defined in the document`;
  const secret = ctx.secrets[name];
  if (secret === undefined) return `no secret for '${name}' in auth`;
  if (secret === '') return `auth.${name} is empty (is its variable set?)`;
  const type = String(scheme['type'] ?? '');
  if (type === 'apiKey') {
    const where = scheme['in'];
    const keyName = String(scheme['name'] ?? '');
    if (where !== 'header' && where !== 'query' && where !== 'cookie') return `apiKey '${name}' is in '${String(where)}', not header, query or cookie`;
    if (!TOKEN_NAME.test(keyName)) return `apiKey '${name}' has no usable name`;
    if (where === 'cookie' && !COOKIE_VALUE.test(secret)) return `auth.${name} cannot be sent as a cookie value (it holds a space, quote, comma, semicolon or backslash)`;
    if (where === 'header' && /[^\t\x20-\x7e]/.test(secret)) return `auth.${name} cannot be sent in a header (a control character or non-ASCII)`;
    return { scheme: name, kind: 'apiKey', in: where, name: keyName, value: secret };
  }
  if (type === 'http') {
    const kind = String(scheme['scheme'] ?? '').toLowerCase();
    if (kind === 'bearer') return /[^\x21-\x7e]/.test(secret) ? `auth.${name} holds a space or a control character` : { scheme: name, kind: 'bearer', token: secret };
    if (kind === 'basic') {
      // base64 carries any text; a control character in a password is a mistake in the variable, not a password.
      if (/[\x00-\x1f\x7f]/.test(secret)) return `auth.${name} holds a control character`;
      return secret.includes(':') ? { scheme: name, kind: 'basic', userPass: secret } : `auth.${name} must be "user:password" for HTTP basic`;
    }
    return `HTTP scheme '${kind}' of '${name}' is not supported (bearer and basic are)`;
  }
  if (type === 'oauth2') {
    const flow = isRec(scheme['flows']) ? scheme['flows']['clientCredentials'] : undefined;
    if (!isRec(flow) || typeof flow['tokenUrl'] !== 'string') return `oauth2 scheme '${name}' has no clientCredentials flow (the only one the gateway can use on its own)`;
    let tokenUrl: string;
    try {
      tokenUrl = new URL(flow['tokenUrl'], ctx.base).href;
    } catch {
      return `oauth2 scheme '${name}': tokenUrl '${flow['tokenUrl']}' is not a URL`;
    }
    const bad = tokenUrlProblem(tokenUrl);
    if (bad) return `oauth2 scheme '${name}': ${bad}`;
    const colon = secret.indexOf(':');
    if (colon <= 0) return `auth.${name} must be "clientId:clientSecret" for OAuth2 client credentials`;
    const clientId = secret.slice(0, colon);
    const clientSecret = secret.slice(colon + 1);
    const scope = scopes.length > 0 ? scopes.join(' ') : undefined;
    return {
      scheme: name,
      kind: 'oauth2',
      credentials: { kind: 'clientCredentials', client: { tokenUrl, clientId, clientSecret, scope, audience: undefined, authMethod: 'client_secret_basic' } },
      tokenKey: `openapi\0${ctx.file}\0${name}\0${sha256Hex(`${tokenUrl}\0${secret}\0${scope ?? ''}`)}`,
    };
  }
  return `securityScheme '${name}' of type '${type}' is not supported (apiKey, http bearer/basic and oauth2 client credentials are)`;
}

/** Two schemes of one requirement that would both set Authorization (or one header twice). */
function clashingHeaders(plans: readonly AuthPlan[]): string | undefined {
  const seen = new Set<string>();
  for (const p of plans) {
    const header = p.kind === 'apiKey' ? (p.in === 'header' ? p.name.toLowerCase() : undefined) : 'authorization';
    if (header === undefined) continue;
    if (seen.has(header)) return `schemes ${plans.map((x) => `'${x.scheme}'`).join(', ')} would all set the ${header} header`;
    seen.add(header);
  }
  return undefined;
}
