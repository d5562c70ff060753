import { createSocket, type Socket } from 'node:dgram';
import { Resolver } from 'node:dns/promises';
import { isIP, type AddressInfo } from 'node:net';
import * as packet from 'dns-packet';
import type { LookupAll } from '../../src/guards/url.js';

/**
 * A real DNS server on 127.0.0.1 (UDP, port 0) answering A and AAAA queries from a table the test
 * controls; an answer may be a list consumed one query at a time (a rebinding name: public first,
 * then 127.0.0.1). TTL 0, as a rebinding attacker would set it.
 */
export class DnsServer {
  private readonly socket: Socket = createSocket('udp4');
  /** `A name` / `AAAA name` → the answers still to give, one list per query. */
  private readonly answers = new Map<string, string[][]>();
  private readonly known = new Set<string>();
  readonly queries: string[] = [];
  address = '';

  async start(): Promise<this> {
    this.socket.on('message', (msg, peer) => {
      const q = packet.decode(msg);
      const question = q.questions?.[0];
      if (!question) return;
      const name = question.name.toLowerCase();
      this.queries.push(`${question.type} ${name}`);
      const queue = this.answers.get(`${question.type} ${name}`);
      const addrs = queue ? (queue.length > 1 ? (queue.shift() as string[]) : (queue[0] as string[])) : undefined;
      const answers = (addrs ?? []).map((data) => ({ type: question.type as 'A' | 'AAAA', name: question.name, ttl: 0, class: 'IN' as const, data }));
      const reply = packet.encode({
        type: 'response',
        id: q.id ?? 0,
        flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (this.known.has(name) ? 0 : 3), // 3: NXDOMAIN
        questions: q.questions ?? [],
        answers,
      });
      this.socket.send(reply, peer.port, peer.address);
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    this.address = `127.0.0.1:${(this.socket.address() as AddressInfo).port}`;
    return this;
  }

  /** Each call answers with the next list (the last one repeats). */
  set(name: string, ...answers: string[][]): this {
    const n = name.toLowerCase();
    this.known.add(n);
    this.answers.set(`A ${n}`, answers.map((list) => list.filter((a) => isIP(a) === 4)));
    this.answers.set(`AAAA ${n}`, answers.map((list) => list.filter((a) => isIP(a) === 6)));
    return this;
  }

  /** A lookup (all addresses, both families) through a real resolver that asks only this server. */
  lookup(): LookupAll {
    const resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([this.address]);
    return async (hostname) => {
      const [v4, v6] = await Promise.all([
        resolver.resolve4(hostname).catch((e: NodeJS.ErrnoException) => (e.code === 'ENODATA' ? [] : Promise.reject(e))),
        resolver.resolve6(hostname).catch((e: NodeJS.ErrnoException) => (e.code === 'ENODATA' ? [] : Promise.reject(e))),
      ]);
      return [...v4.map((address) => ({ address, family: 4 })), ...v6.map((address) => ({ address, family: 6 }))];
    };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }
}
