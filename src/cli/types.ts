import type { FileProblem } from '../util/source.js';
import type { OpenApiSummary } from '../tools/openapi/summary.js';

/** What `toolgate check` found; `--json` prints it as is. */

export type WarningRule = 'config' | 'confirm-off' | 'visible-to-all' | 'inline-secret' | 'default-timeout' | 'mcp-no-include' | 'client-config';

export interface CheckWarning extends FileProblem {
  readonly rule: WarningRule;
}

export interface ToolSummary {
  readonly name: string;
  readonly file: string;
  readonly sideEffect: string;
  readonly backends: readonly { readonly id: string; readonly kind: string }[];
  /** true, false, or the arguments a confirm rule looks at (`when amount, path`). */
  readonly gated: boolean | string;
  /** The roles that may see it; null: every role. */
  readonly roles: readonly string[] | null;
  readonly prefilter: boolean;
  readonly timeoutMs: number;
}

export interface ServerSummary {
  readonly name: string;
  readonly file: string;
  readonly transport: string;
  readonly include: readonly string[] | null;
  /** With `--connect`: whether it started, its protocol revision and tool count, or why not. */
  readonly connect?: ConnectResult;
}

export type ConnectResult =
  | { readonly ok: true; readonly protocolVersion?: string; readonly tools: number }
  | { readonly ok: false; readonly error: string };

export interface IssuerSummary {
  readonly issuer: string;
  /** The aud values its tokens must name one of. */
  readonly audience: readonly string[];
  readonly algorithms: readonly string[];
  /** null: taken from discovery. */
  readonly jwksUri: string | null;
  readonly introspection: boolean;
  /** With `--connect`: what its discovery document and JWKS said, or why they could not be had. */
  readonly connect?: IssuerConnect;
}

export interface IssuerDiscovery {
  readonly issuerMatches: true;
  readonly jwksUri: string | null;
  readonly introspectionEndpoint: string | null;
}

export type IssuerConnect =
  | {
      readonly ok: true;
      readonly discovery?: IssuerDiscovery;
      readonly jwksUri: string;
      readonly keys: number;
      /** Keys that can verify one of the configured algorithms. */
      readonly usableKeys: number;
      readonly keyAlgorithms: readonly string[];
    }
  | { readonly ok: false; readonly error: string };

export interface CheckReport {
  readonly ok: boolean;
  readonly config: string | null;
  readonly toolsDir: string | null;
  readonly errors: readonly FileProblem[];
  readonly warnings: readonly CheckWarning[];
  readonly tools: readonly ToolSummary[];
  /** MCP servers declared in tools.d: their tools are imported at run time, so not listed in `tools`. */
  readonly mcpServers: readonly ServerSummary[];
  /** auth.oidc, as the gateway would trust it. */
  readonly issuers: readonly IssuerSummary[];
  /** Each server of an MCP client config file (mcpServers / servers): its name as written and as served, or why skipped. */
  readonly clientConfigs: readonly ClientConfigName[];
  /** Each kind: openapi file: the operations it becomes (tool, method, path, side effect) and those skipped, with why. */
  readonly openapi: readonly Omit<OpenApiSummary, 'specPath'>[];
}

export interface ClientConfigName {
  readonly file: string;
  readonly from: string;
  /** null: the name cannot be used (the file's errors say why). */
  readonly to: string | null;
  readonly skipped?: string;
}
