// The tiny upstream of bench/http-overhead.mjs: node:http on 127.0.0.1, reads the request body and
// answers a small fixed JSON document. Prints `READY <port>`.
import { createServer } from 'node:http';

const body = Buffer.from(JSON.stringify({ ok: true, message: 'hello from the upstream', n: 42 }));
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => console.log(`READY ${server.address().port}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
