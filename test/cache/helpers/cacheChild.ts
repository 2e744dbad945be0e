/**
 * A child process for the multi-process tests. It imports the compiled cache relative to its own file,
 * never the working directory, so it runs from any build folder.
 *   put  <dir> <seed> <count> <startAt>: waits until startAt, then puts the shared key `count` times with
 *        bodies of different lengths, getting after each put; exits 1 if a get returns a bad body.
 *   loop <dir> <seed>: puts large bodies forever, printing "ready" after the first; the test kills it.
 *   paused <dir> <seed> <length>: puts the shared key, stopping halfway through writing its temp file
 *        to print "paused" and read one line from stdin: "go" finishes the put, "fail" makes the rest of
 *        the write fail with EIO. Then prints "put ok" or "put failed <code>", and "got <seed>" of what a
 *        get returns (or "got null").
 */
import { readSync } from 'node:fs';
import { BlobCache } from '../../../src/cache/index.js';
import { writerFs } from '../../../src/cache/blobFile.js';
import { EngineError } from '../../../src/errors/index.js';
import { checkBody, identity, patternBody } from './fixture.js';

/** One line from stdin, read synchronously, as a writer stopped in the middle of a write is. */
function readLine(): string {
  const buf = Buffer.alloc(64);
  let text = '';
  while (!text.includes('\n')) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (e) {
      if ((e as { code?: string }).code !== 'EAGAIN') throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      continue;
    }
    if (n === 0) break;
    text += buf.toString('utf8', 0, n);
  }
  return text.trim();
}

const [mode, dir, seedText, countText, startText] = process.argv.slice(2);
const seed = Number(seedText);
const cache = BlobCache.open(dir);

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
} else if (mode === 'paused') {
  const realWrite = writerFs.writeSync;
  let stopped = false;
  writerFs.writeSync = ((fd: number, bytes: Uint8Array, offset: number, length: number): number => {
    if (stopped) return realWrite(fd, bytes, offset, length);
    stopped = true;
    const half = realWrite(fd, bytes, offset, Math.floor(length / 2));
    process.stdout.write('paused\n');
    if (readLine() === 'fail') throw Object.assign(new Error('EIO: i/o error, write (injected)'), { code: 'EIO' });
    return half;
  }) as typeof writerFs.writeSync;
  try {
    cache.put(identity(), patternBody(seed, Number(countText)));
    process.stdout.write('put ok\n');
  } catch (e) {
    process.stdout.write(`put failed ${e instanceof EngineError ? e.code : String(e)}\n`);
  }
  const got = cache.get(identity());
  process.stdout.write(`got ${got === null ? 'null' : checkBody(got) ? String(got.readUInt32LE(0)) : 'a bad body'}\n`);
  cache.close();
} else {
  process.stderr.write(`unknown mode ${String(mode)}\n`);
  process.exit(2);
}
