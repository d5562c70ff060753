// autocannon, bounded in time, with latencies kept at full (sub-millisecond) resolution: autocannon's
// own histogram rounds to whole milliseconds, too coarse for a "< 1 ms added" target.
import autocannon from 'autocannon';
import { performance } from 'node:perf_hooks';

/**
 * Runs one load and resolves to { requests, ok, non2xx, errors, timeouts, seconds, rps, p50, p90, p99, mean }
 * (latencies in ms, of 2xx responses). `opts` are autocannon options (url, method, headers, body,
 * connections, duration, overallRate, amount, requests...); `maxSeconds` stops it regardless.
 */
export function load(opts, { maxSeconds = (opts.duration ?? 10) + 30 } = {}) {
  return new Promise((resolve, reject) => {
    let lat = new Float64Array(1 << 16);
    let n = 0;
    let non2xx = 0;
    const started = performance.now();
    const inst = autocannon({ timeout: 10, ...opts }, (err, result) => {
      clearTimeout(guard);
      if (err) return reject(err);
      const seconds = (performance.now() - started) / 1000;
      const xs = lat.subarray(0, n).sort();
      const pct = (p) => (n === 0 ? NaN : xs[Math.min(n - 1, Math.floor((n * p) / 100))]);
      let sum = 0;
      for (let i = 0; i < n; i++) sum += xs[i];
      resolve({
        requests: n + non2xx,
        ok: n,
        non2xx,
        errors: result.errors,
        timeouts: result.timeouts,
        seconds,
        rps: n / seconds,
        mean: sum / n,
        p50: pct(50),
        p90: pct(90),
        p99: pct(99),
      });
    });
    const guard = setTimeout(() => inst.stop(), maxSeconds * 1000);
    inst.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode > 299) {
        non2xx++;
        return;
      }
      if (n === lat.length) {
        const bigger = new Float64Array(lat.length * 2);
        bigger.set(lat);
        lat = bigger;
      }
      lat[n++] = responseTime;
    });
  });
}

export { median } from './stats.mjs';
