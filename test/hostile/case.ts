/**
 * One row of the hostile-input suite: a CLI call (or an API script) in a fresh temporary folder, with
 * the exit code and error code a user must get. The runner (test/hostile/hostile.test.ts) runs every
 * table under a time bound (and, as its own process, a memory bound) and fails a case that hangs, aborts,
 * prints a stack trace or exits 3.
 */
export interface HostileCase {
  /** What the case is, as a reader of a failing test wants to see it. */
  readonly name: string;
  /** Prepares files in `dir` (a fresh temporary folder) before the call. */
  readonly setup?: (dir: string) => void | Promise<void>;
  /**
   * The call: `cli` arguments after `bin.js` (`{dir}` in any argument is replaced by the folder), or an
   * ES module `script` run with `node --input-type=module` whose `{pkg}` is the built package's
   * `dist/src/index.js` URL and whose `{dir}` is the folder.
   */
  readonly cli?: readonly string[];
  readonly script?: string;
  /** Standard input, when the call reads it (bytes for input that is not UTF-8). */
  readonly stdin?: string | Uint8Array;
  /** Environment variables the call runs with, beside the runner's own (in this process: set meanwhile). */
  readonly env?: Readonly<Record<string, string>>;
  /** The exit code the user must see. */
  readonly exit: number;
  /** The error code that must appear (`"code": "X"` in `--json` output, or `[X]` on stderr). */
  readonly code?: string;
  /** Extra checks after the call (files that must still exist, text that must not appear). */
  readonly check?: (r: { dir: string; stdout: string; stderr: string }) => void;
  /**
   * Time bound for this case (default 20 s) where the CLI starts in 1 s, stretched where it starts slower
   * (see loadScale in hostile.test.ts); memory is bounded by --max-old-space-size=512 for a case run as its
   * own process.
   */
  readonly timeoutMs?: number;
  /**
   * Why a `cli` case runs as its own process rather than through main(argv, io) in the test's (see
   * hostile.test.ts): what it tests is a memory bound (--max-old-space-size), a signal, a hang that only
   * a killed process can end (a blocking open of a FIFO, a loop that never yields), or the process's exit.
   * A `script` runs as its own process unless `here` says it need not.
   */
  readonly ownProcess?: 'memory' | 'signal' | 'hang' | 'exit';
  /**
   * A `script` run in the test's process (imported, see importHere in test/cli/inProcess.ts) rather than
   * as its own: an API call whose subject is a typed refusal, not a memory bound, a signal, a hang or the
   * process's exit. Without it a script runs as its own process.
   */
  readonly here?: true;
}
