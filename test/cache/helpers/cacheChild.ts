/**
 * A child process for the multi-process tests. It imports the compiled cache relative to its own file,
 * never the working directory, so it runs from any build folder.
 *   put  <dir> <seed> <count> <startAt>: waits until startAt, then puts the shared key `count` times with
 *        bodies of different lengths, getting after each put; exits 1 if a get returns a bad body.
 *   loop <dir> <seed>: puts large bodies forever, printing "ready" after the first; the test kills it.
 */
import { BlobCache } from '../../../src/cache/index.js';
import { checkBody, identity, patternBody } from './fixture.js';

const [mode, dir, seedText, countText, startText] = process.argv.slice(2);
const seed = Number(seedText);
const cache = BlobCache.open(dir!);

if (mode === 'put') {
  const start = Number(startText);
  while (Date.now() < start) { /* spin, so every child starts writing in the same moment */ }
  for (let i = 0; i < Number(countText); i++) {
    const s = seed * 1000 + i;
    cache.put(identity(), patternBody(s, 1000 + ((s * 7919) % 60_000)));
    const got = cache.get(identity());
    if (got !== null && !checkBody(got)) {
      process.stderr.write(`bad body after put ${i}\n`);
      process.exit(1);
    }
  }
  cache.close();
} else if (mode === 'loop') {
  for (let i = 0; ; i++) {
    const s = seed * 100_000 + i;
    cache.put(identity(i % 2), patternBody(s, 1_000_000 + ((s * 7919) % 3_000_000)));
    if (i === 0) process.stdout.write('ready\n');
  }
} else {
  process.stderr.write(`unknown mode ${String(mode)}\n`);
  process.exit(2);
}
