import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers.js';

describe('engine: close()', function () {
  this.timeout(30_000);

  it('lets a process that used every actor exit on its own', async () => {
    const tmp = tempDir();
    try {
      const script = fileURLToPath(new URL('./fixtures/closeExit.js', import.meta.url));
      const out = await new Promise<string>((resolve, reject) => {
        // The timeout kills a process kept alive by a leaked worker: that is the failure this test catches.
        execFile(process.execPath, [script, tmp.dir], { timeout: 15_000 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`${err.message}\n${stderr}`)); else resolve(stdout);
        });
      });
      expect(out.trim()).to.equal('closed 0');
    } finally {
      tmp.remove();
    }
  });

  it('closing 50 engines right after a verified job, their pool workers still loading, never aborts the process', async function () {
    this.timeout(180_000);
    const tmp = tempDir();
    try {
      const script = fileURLToPath(new URL('./fixtures/closeRace.js', import.meta.url));
      const out = await new Promise<string>((resolve, reject) => {
        // A worker terminated mid-load aborts this child (v8::Module::IsGraphAsync, exit 134), not mocha.
        execFile(process.execPath, [script, tmp.dir, '50'], { timeout: 170_000 }, (err, stdout, stderr) => {
          if (err) reject(new Error(`${err.message}\n${stderr.slice(0, 2000)}`)); else resolve(stdout);
        });
      });
      expect(out.trim()).to.equal('closed 50 of 50');
    } finally {
      tmp.remove();
    }
  });
});
