import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Level, Logger } from 'pino';

type LogFn = FastifyBaseLogger['info'];

/**
 * Fastify's per-request logger, made only when the request logs something. Fastify builds a pino
 * child (with its request id binding) for every request; with our redaction that child costs
 * about 1 KiB and several µs, and most requests never write a line at the levels a gateway runs
 * at. Same output: the child is the one Fastify would have made, built on first use.
 */
class LazyChild {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly opts: ChildLoggerOptions,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.bindings, this.opts));
  }

  private enabled(level: Level): boolean {
    return this.made ? this.made.isLevelEnabled(level) : this.opts.level === undefined ? this.parent.isLevelEnabled(level) : true;
  }

  get level(): string {
    return this.made?.level ?? this.opts.level ?? this.parent.level;
  }

  set level(value: string) {
    this.real.level = value;
  }

  isLevelEnabled(level: Level): boolean {
    return this.enabled(level) && this.real.isLevelEnabled(level);
  }

  fatal(...args: Parameters<LogFn>): void {
    this.emit('fatal', args);
  }

  error(...args: Parameters<LogFn>): void {
    this.emit('error', args);
  }

  warn(...args: Parameters<LogFn>): void {
    this.emit('warn', args);
  }

  info(...args: Parameters<LogFn>): void {
    this.emit('info', args);
  }

  debug(...args: Parameters<LogFn>): void {
    this.emit('debug', args);
  }

  trace(...args: Parameters<LogFn>): void {
    this.emit('trace', args);
  }

  silent(): void {}

  child(bindings: Bindings, opts?: ChildLoggerOptions): Logger {
    return this.real.child(bindings, opts);
  }

  private emit(level: Level, args: Parameters<LogFn>): void {
    if (!this.enabled(level)) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  }
}

/** Fastify's `childLoggerFactory`: a LazyChild of the app's pino logger. */
export function lazyChildLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, opts: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyChild(logger as Logger, bindings, opts) as unknown as FastifyBaseLogger;
}
