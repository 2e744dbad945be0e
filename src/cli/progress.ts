/**
 * Progress of long work on the terminal: one bar (cli-progress) on stderr, drawn only when both
 * stdout and stderr are terminals and --json is not given, so a pipe, a file or a script sees exactly
 * the output it would without it. Commands (gguf pack and verify, contracts, generate's model load,
 * later serve) take one from `createProgress` and call `update` and `stop`; where nothing is drawn
 * both do nothing.
 */
import { Presets, SingleBar } from 'cli-progress';

/** The stream a bar draws on: process.stderr, or a test's fake terminal. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  readonly columns?: number;
  write(text: string): boolean;
}

export interface ProgressOptions {
  /** --json: never draw. */
  readonly json?: boolean;
  /** Force drawing on or off (a command's --progress); default: both streams are terminals. */
  readonly progress?: boolean;
  /** Where the bar draws (default process.stderr). */
  readonly stream?: ProgressStream;
  /** The command's stdout (default process.stdout): nothing is drawn when it is not a terminal. */
  readonly stdout?: { readonly isTTY?: boolean };
  /** Erase the bar when it stops (a status line that gives way to the command's output) instead of leaving it. */
  readonly clear?: boolean;
}

/** A bar: `update` starts it on its first call; `stop` ends the line. */
export interface Progress {
  /** True when the bar draws at all. */
  readonly shown: boolean;
  /** `fields` fill the format's own {placeholders}. */
  update(done: number, total: number, fields?: Readonly<Record<string, string | number>>): void;
  stop(): void;
}

const SILENT: Progress = { shown: false, update: () => undefined, stop: () => undefined };

/** True when a bar should be drawn under `opts` (see the file's doc). */
export function wantsProgress(opts: ProgressOptions): boolean {
  if (opts.json === true) return false;
  if (opts.progress !== undefined) return opts.progress;
  return (opts.stream ?? process.stderr).isTTY === true && (opts.stdout ?? process.stdout).isTTY === true;
}

/**
 * A bar in cli-progress's `format` ({bar}, {percentage}, {value}, {total}, {eta_formatted},
 * {duration_formatted} and the caller's fields), or one that draws nothing (wantsProgress).
 */
export function createProgress(format: string, opts: ProgressOptions = {}): Progress {
  if (!wantsProgress(opts)) return SILENT;
  // cli-progress only reads isTTY, columns and write of its stream.
  const stream = (opts.stream ?? process.stderr) as NodeJS.WriteStream;
  const bar = new SingleBar({ format, stream, hideCursor: true, etaBuffer: 50, clearOnComplete: opts.clear === true }, Presets.shades_classic);
  let started = false;
  return {
    shown: true,
    update(done, total, fields = {}) {
      if (!started) {
        bar.start(total, done, fields);
        started = true;
      } else {
        if (bar.getTotal() !== total) bar.setTotal(total);
        bar.update(done, fields);
      }
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
