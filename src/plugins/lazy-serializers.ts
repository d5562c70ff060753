import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type SerializerFactory = ReturnType<typeof SerializerSelector>;

/**
 * Fastify's own response serializers (fast-json-stringify, the same options and shared schemas),
 * each compiled on the first response it serializes instead of at start-up. The gateway declares
 * about 140 route × status response schemas, most of them for answers an idle or small deployment
 * never sends (admin, console, OpenAPI, error statuses); compiled up front they kept ≈ 1.5 MB of
 * generated source and its code in memory (docs/benchmarks.md, Memory).
 */
export function lazySerializers(): SerializerFactory {
  const build = SerializerSelector();
  return (externalSchemas, options) => {
    const compile = build(externalSchemas, options);
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => (serialize ??= compile(route))(doc);
    };
  };
}
