import { Type, type Static } from '@sinclair/typebox';
import { HALF_LIFE_MS, MAX_TERM_LENGTH, MAX_TERMS_PER_TOOL, MAX_TOOLS, type LearnedStats, type ScaledTable, scaledFrom } from './stats.js';

/**
 * The export/import file of GET/PUT /admin/prefilter/learned: per tool, its learned terms and
 * their weights as of `exportedAt` (decay goes on from the import). Nothing else: no query text,
 * no caller, no session.
 */
export const LEARNED_KIND = 'toolgate.prefilter.learned';

export const LearnedFile = Type.Object(
  {
    version: Type.Literal(1, { description: 'format version' }),
    kind: Type.Literal(LEARNED_KIND),
    exportedAt: Type.Optional(Type.String({ format: 'date-time' })),
    halfLifeDays: Type.Optional(Type.Number({ description: 'how fast weights fade (informative; the gateway\'s own applies)' })),
    tools: Type.Record(
      Type.String({ minLength: 1, maxLength: 256 }),
      Type.Record(Type.String({ minLength: 1, maxLength: MAX_TERM_LENGTH }), Type.Number({ minimum: 0, maximum: 1e6 }), {
        maxProperties: MAX_TERMS_PER_TOOL,
        propertyNames: { minLength: 1, maxLength: MAX_TERM_LENGTH },
      }),
      { maxProperties: MAX_TOOLS, propertyNames: { minLength: 1, maxLength: 256 }, description: 'tool name → analysed term → weight' },
    ),
  },
  { additionalProperties: false, $id: 'LearnedFile' },
);
export type LearnedFileT = Static<typeof LearnedFile>;

/** The largest import body (bytes; above it 413 as for every body): a full file (MAX_TOOLS × MAX_TERMS_PER_TOOL) is about 25 MB. */
export const MAX_IMPORT_BYTES = 32 * 1024 * 1024;

export function exportFile(stats: LearnedStats, now: number): LearnedFileT {
  const tools: Record<string, Record<string, number>> = {};
  const weights = [...stats.weights(now)].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  for (const [tool, m] of weights) {
    tools[tool] = Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).map(([t, w]) => [t, Math.round(w * 1e4) / 1e4]));
  }
  return { version: 1, kind: LEARNED_KIND, exportedAt: new Date(now).toISOString(), halfLifeDays: HALF_LIFE_MS / 86400000, tools };
}

/** A validated file as scaled statistics at `now` (zero weights left out). */
export function importTable(file: LearnedFileT, now: number): ScaledTable {
  const weights = new Map<string, Map<string, number>>();
  for (const [tool, terms] of Object.entries(file.tools)) {
    const m = new Map(Object.entries(terms).filter(([, w]) => w > 0));
    if (m.size > 0) weights.set(tool, m);
  }
  return scaledFrom(weights, now);
}
