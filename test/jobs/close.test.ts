import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exitOnItsOwn } from '../actors/helpers.js';
import { tempDir } from './helpers.js';

/** Runs a fixture script in a child process; it prints one line when done and must then exit on its own. */
async function child(name: string, args: readonly string[]): Promise<string> {
  const script = fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
  // A process kept alive by a leaked worker is killed (see exitOnItsOwn): that is a failure these catch.
  const { code, out, err } = await exitOnItsOwn(spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
  expect(code, `${out}\n${err.slice(0, 2000)}`).to.equal(0);
  return out;
}

describe('engine: close()', function () {
  this.timeout(60_000);

  it('lets a process that used every actor exit on its own', async () => {
    const tmp = tempDir();
    try {
      expect((await child('closeExit', [tmp.dir])).trim()).to.equal('closed 0');
    } finally {
      tmp.remove();
    }
  });

  it('closing 4 engines right after a verified job, their pool workers still loading, never aborts the process', async function () {
    this.timeout(180_000);
    const tmp = tempDir();
    try {
      // A worker terminated mid-load aborts this child (v8::Module::IsGraphAsync, exit 134), not mocha.
      // Four rounds close 0, 9, 18 and 27 ms after the job. Ten (each 3 ms apart) cost 12 s of CPU and,
      // with the pools' wait for loading removed, still passed every time on Node 20.20 (2026-12-03):
      // the deterministic check of that wait is test/actors/pool.test.ts's slow-loading worker, which
      // fails without it; this one checks that a real engine closed this way ends cleanly.
      expect((await child('closeRace', [tmp.dir, '4'])).trim()).to.equal('closed 4 of 4');
    } finally {
      tmp.remove();
    }
  });
});
