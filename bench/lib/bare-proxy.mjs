// The floor for a Node gateway (bench/http-overhead.mjs): Fastify 5 with one route, POST /call,
// forwarding `arguments` to the upstream with undici.request and answering { result } as JSON.
// No auth, no validation, no breaker, no audit, no logs. Prints `READY <port>`.
//   node bench/lib/bare-proxy.mjs <upstream url>
import Fastify from 'fastify';
import { Agent, request } from 'undici';

const upstream = `${process.argv[2]}/echo`;
// The same pool settings as toolgate's HTTP adapter.
const dispatcher = new Agent({ connections: 256, headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 10_000 });
const app = Fastify({ logger: false });
app.post('/call', async (req) => {
  const res = await request(upstream, {
    method: 'POST',
    dispatcher,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(req.body?.arguments ?? {}),
  });
  return { result: await res.body.json() };
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`READY ${new URL(address).port}`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
