import { Type, type Static, type TLiteral, type TUnion } from '@sinclair/typebox';

/**
 * `resultGuards:` (SPEC §6): checks on what a tool returns, in a tool file, an MCP server file,
 * an OpenAPI file and the config's `defaults.resultGuards`. Layers merge by guard kind: a tool's
 * entry for a kind replaces its file's, which replaces the default's; `off` turns a kind off.
 */
const Obj = <T extends Parameters<typeof Type.Object>[0]>(props: T, description?: string) =>
  Type.Object(props, { additionalProperties: false, ...(description ? { description } : {}) });
const Lit = <const T extends string[]>(values: [...T], description?: string) =>
  Type.Union(values.map((v) => Type.Literal(v)), description ? { description } : {}) as unknown as TUnion<{ [K in keyof T]: TLiteral<T[K]> }>;

export const PII_KINDS = ['email', 'phone', 'card', 'iban', 'cn_id'] as const;

export const ResultGuardSchema = Type.Union([
  Obj({ secrets: Lit(['redact', 'flag', 'refuse', 'off']) }, 'the gateway\'s own secret values and well-known credential shapes'),
  Obj(
    {
      pii: Type.Array(Lit([...PII_KINDS]), { minItems: 1, uniqueItems: true }),
      action: Lit(['redact', 'flag', 'refuse', 'off']),
    },
    'personal data: e-mail, phone, payment card (Luhn), IBAN (checksum), mainland China resident ID (checksum)',
  ),
  Obj({ injection: Lit(['flag', 'refuse', 'off']) }, 'instruction-like text aimed at the model, role or tool-call markup (English and Chinese)'),
  Obj({ invisible: Lit(['strip', 'flag', 'refuse', 'off']) }, 'Unicode tag characters, zero-width and bidi controls'),
  Obj(
    {
      links: Obj({
        allowHosts: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'host globs whose links and images pass ("*.example.com")' })),
        action: Lit(['defang', 'flag', 'refuse', 'off']),
      }),
    },
    'markdown and HTML links or images to hosts not on the allow-list',
  ),
  Obj(
    {
      maxBlocks: Type.Integer({ minimum: 1, maximum: 10000 }),
      action: Type.Optional(Lit(['truncate', 'refuse'], 'default refuse')),
    },
    'at most this many content blocks in a result',
  ),
  Obj(
    {
      webhook: Type.Union([
        Obj({
          url: Type.String({ pattern: '^https?://' }),
          timeoutMs: Type.Optional(Type.Integer({ minimum: 1, maximum: 60000, default: 500 })),
          failOpen: Type.Optional(Type.Boolean({ default: false })),
          headers: Type.Optional(Type.Record(Type.String(), Type.String(), { additionalProperties: false })),
        }),
        Type.Literal('off', { description: 'no webhook for this tool (or file), whatever the layer below says' }),
      ]),
    },
    'an external guard service: posts the (already redacted) result, gets back allow, redact spans or refuse',
  ),
]);
export type ResultGuardFile = Static<typeof ResultGuardSchema>;

export const ResultGuardsSchema = Type.Array(ResultGuardSchema, { description: 'checks on what the tool returns (SPEC §6)' });

/** The config's default when `defaults.resultGuards` is absent: safe without being noisy. */
export const DEFAULT_RESULT_GUARDS: readonly ResultGuardFile[] = Object.freeze([{ secrets: 'redact' }, { invisible: 'strip' }]);
