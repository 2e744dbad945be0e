#!/usr/bin/env node
/** The `npu-offload` executable: runs the CLI and sets the exit code. */
import { main } from './main.js';
import { messageOf } from '../errors/index.js';

// A reader that stops early (`gguf info M.gguf | head`) closes the pipe. That is not a failure of the
// command: stop quietly, as shell tools do, rather than die on an unhandled EPIPE with a stack trace.
// Nothing is written on the way out, since the stream that failed may be the one a message would use.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    process.exit(e.code === 'EPIPE' ? (typeof process.exitCode === 'number' ? process.exitCode : 0) : 1);
  });
}

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: unknown) => {
  process.stderr.write(`internal error: ${messageOf(e)}\n`);
  process.exitCode = 3;
});
