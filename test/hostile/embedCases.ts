/** Hostile inputs to embedding (src/jobs/embed.ts): what is not a port, what cannot cross one, a host that dies. */
import type { HostileCase } from './case.js';

/** Prints a typed failure as the CLI would, `[Code] message` on stderr with exit code 1. */
const REPORT = 'const report = (e) => { process.stderr.write(`[${e.code}] ${e.message}\\n`); process.exitCode = 1; };';

export const cases: readonly HostileCase[] = [
  {
    name: 'embed: exposeEngine outside a worker (parentPort is null) is InvalidOptions naming the port',
    here: true,
    script: `import { exposeEngine } from '{pkg}';\n${REPORT}\ntry { exposeEngine(null); } catch (e) { report(e); }`,
    exit: 1,
    code: 'InvalidOptions',
  },
  {
    name: 'embed: connectEngine on something that is not a port is InvalidOptions',
    here: true,
    script: `import { connectEngine } from '{pkg}';\n${REPORT}\ntry { connectEngine({ postMessage: 1 }); } catch (e) { report(e); }`,
    exit: 1,
    code: 'InvalidOptions',
  },
  {
    name: 'embed: inputs that cannot be copied across the port (a function) are InvalidInput, and nothing hangs',
    here: true,
    script: `import { MessageChannel } from 'node:worker_threads';
import { connectEngine, exposeEngine } from '{pkg}';
${REPORT}
const { port1, port2 } = new MessageChannel();
exposeEngine(port1, { cacheDir: '{dir}/cache' });
const engine = connectEngine(port2);
const program = { format: 'program@1', name: 'p', args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [2] }],
  eqns: [{ op: 'exp', in: ['x'], out: 'y' }], results: ['y'], state: {} };
await engine.submit({ program, target: 'cpu', inputs: { x: () => 1 } }).result.catch(report);
await engine.close();`,
    exit: 1,
    code: 'InvalidInput',
  },
  {
    name: 'embed: a worker that dies mid-job fails the job with ActorCrashed, and the host exits on its own',
    // In the runner's process: nothing left open after it (the runner's check) is what exiting on its own needs.
    here: true,
    setup: async (dir) => {
      const { writeFileSync } = await import('node:fs');
      const pkg = new URL('../../src/index.js', import.meta.url).href;
      writeFileSync(`${dir}/engine.worker.mjs`, `import { parentPort, workerData } from 'node:worker_threads';
import { exposeEngine } from '${pkg}';
exposeEngine(parentPort, workerData);\n`);
    },
    script: `import { Worker } from 'node:worker_threads';
import { connectEngine } from '{pkg}';
${REPORT}
// execArgv: the worker must not inherit --input-type, which only applies to the script itself.
const worker = new Worker('{dir}/engine.worker.mjs', { execArgv: [], workerData: { cacheDir: '{dir}/cache', devices: { cpu: { faults: { hangOnRun: 'always' } } } } });
const engine = connectEngine(worker);
const program = { format: 'program@1', name: 'p', args: [{ name: 'x', role: 'activation', dtype: 'f32', shape: [2] }],
  eqns: [{ op: 'exp', in: ['x'], out: 'y' }], results: ['y'], state: {} };
const job = engine.submit({ program, target: 'cpu', inputs: { x: { dtype: 'f32', shape: [2], data: [0, 1] } }, deadlineMs: 60000 });
job.on('loaded', () => void worker.terminate());
await job.result.catch(report);
await engine.close();`,
    exit: 1,
    code: 'ActorCrashed',
  },
];
