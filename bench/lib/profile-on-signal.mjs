// Preloaded into a gateway by a bench (node --import) when asked for a profile of one phase: the first
// SIGWINCH starts V8's CPU profiler in this process (100 µs sampling), the next one stops it and writes
// the profile to $TOOLGATE_PROFILE_FILE, then prints `PROFILE <file>` on stderr. Changes nothing else.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const file = process.env.TOOLGATE_PROFILE_FILE;
let session;
const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));

process.on('SIGWINCH', async () => {
  if (!file) return;
  if (!session) {
    session = new Session();
    session.connect();
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 100 });
    await post('Profiler.start');
    process.stderr.write('PROFILE started\n');
    return;
  }
  const { profile } = await post('Profiler.stop');
  session.disconnect();
  session = undefined;
  writeFileSync(file, JSON.stringify(profile));
  process.stderr.write(`PROFILE ${file}\n`);
});
