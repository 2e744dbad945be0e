#!/usr/bin/env node
/** The `npu-offload` executable: runs the CLI and sets the exit code. */
import { main } from './main.js';

main(process.argv.slice(2)).then((code) => { process.exitCode = code; }, (e: unknown) => {
  process.stderr.write(`internal error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 3;
});
