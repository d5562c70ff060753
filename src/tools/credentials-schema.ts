import { Type, type Static } from '@sinclair/typebox';

/**
 * `credentials:` of an HTTP backend or a remote MCP server file (SPEC §6): how the gateway gets
 * the bearer token it sends upstream. Static headers stay under `headers`.
 */

const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });

const TokenUrl = Type.String({ pattern: '^https?://', description: 'the token endpoint: https, or http to a loopback address; redirects are not followed' });
const ClientId = Type.String({ minLength: 1 });
const ClientSecret = Type.String({ minLength: 1, description: 'only as ${env:NAME}: a value written in the file is refused' });
const Scope = Type.Optional(Type.String({ minLength: 1, description: 'space-separated scopes asked for' }));
const AuthMethod = Type.Optional(
  Type.Union([Type.Literal('client_secret_basic'), Type.Literal('client_secret_post')], {
    description: 'how the client authenticates to the token endpoint (default client_secret_basic: HTTP Basic)',
  }),
);
const Audience = (description: string) => Type.String({ minLength: 1, description });

export const CredentialsSchema = Type.Union(
  [
    Obj(
      {
        clientCredentials: Obj({
          tokenUrl: TokenUrl,
          clientId: ClientId,
          clientSecret: ClientSecret,
          scope: Scope,
          audience: Type.Optional(Audience('sent as RFC 8707 `resource` and as `audience`')),
          authMethod: AuthMethod,
        }),
      },
      "the gateway's own token (RFC 6749 §4.4), one per backend, cached until shortly before it expires",
    ),
    Obj(
      {
        tokenExchange: Obj({
          tokenUrl: TokenUrl,
          clientId: ClientId,
          clientSecret: ClientSecret,
          audience: Audience('the upstream the exchanged token is for: sent as RFC 8707 `resource` and as `audience`'),
          scope: Scope,
          authMethod: AuthMethod,
        }),
      },
      "the caller's access token exchanged (RFC 8693) for one whose audience is the upstream, cached per caller token",
    ),
    Obj(
      { passthrough: Type.Literal(true) },
      "the caller's own access token, forwarded only when its audience already names this upstream (its origin, and a path prefix if any)",
    ),
  ],
  { description: 'credentials to the upstream, sent as Authorization: Bearer' },
);

export type CredentialsFile = Static<typeof CredentialsSchema>;
