import type { UpstreamCredentials } from '../../auth/upstream/spec.js';

/**
 * How one OpenAPI operation is called: built at import from the document, read by the HTTP
 * adapter (src/adapters/openapi-request.ts) with the call's arguments. Plain data, no functions.
 */

export type ParamLocation = 'path' | 'query' | 'header' | 'cookie';
/** The styles the adapter sends (OpenAPI 3.1 §4.8.12.4); others are skipped at import. */
export type ParamStyle = 'simple' | 'label' | 'matrix' | 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';

export interface ParamPlan {
  /** The parameter's name in the request (and the argument's name). */
  readonly name: string;
  readonly in: ParamLocation;
  readonly style: ParamStyle;
  readonly explode: boolean;
  /** Query only: RFC 3986 reserved characters are sent as they are. */
  readonly allowReserved: boolean;
  readonly required: boolean;
}

/** One form field's encoding (OpenAPI `encoding` of an application/x-www-form-urlencoded body). */
export interface FormFieldPlan {
  readonly style: 'form' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';
  readonly explode: boolean;
}

export interface BodyPlan {
  readonly mediaType: 'application/json' | 'application/x-www-form-urlencoded';
  /** The `Content-Type` sent (the document's own, e.g. `application/merge-patch+json`). */
  readonly contentType: string;
  readonly required: boolean;
  /** Form bodies: fields with an encoding other than the default (form, explode). */
  readonly fields?: Readonly<Record<string, FormFieldPlan>>;
}

/** One way the request authenticates; the values are the secrets bound in the file's `auth`. */
export type AuthPlan =
  | { readonly scheme: string; readonly kind: 'apiKey'; readonly in: 'header' | 'query' | 'cookie'; readonly name: string; readonly value: string }
  | { readonly scheme: string; readonly kind: 'bearer'; readonly token: string }
  | { readonly scheme: string; readonly kind: 'basic'; readonly userPass: string }
  /** OAuth2 client credentials: the token comes from src/auth/upstream, shared by the file's operations with the same scopes. */
  | { readonly scheme: string; readonly kind: 'oauth2'; readonly credentials: UpstreamCredentials & { readonly kind: 'clientCredentials' }; readonly tokenKey: string };

export interface RequestPlan {
  /** Upper case. */
  readonly method: string;
  /** Scheme, host and port of every request: from baseUrl or the document's server, never from arguments. */
  readonly origin: string;
  /** The base URL's path without a trailing slash ('' for none); each request stays under it. */
  readonly basePath: string;
  /** The operation's path template, e.g. `/pets/{petId}`. */
  readonly path: string;
  readonly params: readonly ParamPlan[];
  /** The body, sent from the argument `body`. */
  readonly body?: BodyPlan | undefined;
  /** Sent as `Accept` when the operation answers JSON. */
  readonly accept?: string | undefined;
  /** The schemes that apply (all of them, one security requirement of the operation). */
  readonly auth: readonly AuthPlan[];
}

/** The secret values a plan sends (to mask them wherever they could appear). */
export function planSecrets(plan: RequestPlan): string[] {
  return plan.auth.flatMap((a) => {
    switch (a.kind) {
      case 'apiKey':
        return [a.value];
      case 'bearer':
        return [a.token];
      case 'basic':
        return [a.userPass, a.userPass.slice(a.userPass.indexOf(':') + 1)];
      case 'oauth2':
        return [a.credentials.client.clientSecret];
    }
  });
}
