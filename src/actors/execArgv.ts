/**
 * The Node flags a worker thread is started with. A worker inherits the process's flags by default,
 * but one started with `--input-type` (the main script given by `-e`/`-p`) fails at once, so an engine
 * created from `node --input-type=module -e ...` would see every actor crash until it is reported down.
 * Such a process's workers get no flags instead: an explicit list may hold no V8 or per-process flag
 * (those already apply to every thread), and the main-input flags are the main script's alone.
 */
const MAIN_INPUT_FLAGS = ['-e', '--eval', '-p', '--print', '--input-type'];

/** The `execArgv` option of every worker the engine starts: undefined (inherit) unless `argv` names its main input. */
export function workerExecArgv(argv: readonly string[] = process.execArgv): string[] | undefined {
  const names = argv.map((a) => a.split('=', 1)[0]!);
  return names.some((n) => MAIN_INPUT_FLAGS.includes(n)) ? [] : undefined;
}
