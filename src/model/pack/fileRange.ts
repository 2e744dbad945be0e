/**
 * Positional reads and appending writes on one file descriptor, so the packer and the verifier move a
 * model through memory a tile row at a time instead of holding whole tensors (a 0.6B embedding is
 * 600 MB as f32).
 */
import { closeSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { UsageError } from '../../errors/index.js';
import { openRegularFile } from '../../io/files.js';

/** A file opened for positional reads. */
export class FileReader {
  private readonly fd: number;
  private open = true;

  constructor(readonly path: string) {
    this.fd = openRegularFile(path).fd;
  }

  /** Reads exactly `n` bytes at `at`; a file that ends first is an error naming it. */
  read(at: number, n: number, into?: Uint8Array): Uint8Array {
    const buf = into !== undefined && into.length >= n ? into.subarray(0, n) : new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = readSync(this.fd, buf, got, n - got, at + got);
      if (r === 0) throw new UsageError(`${this.path} ended at byte ${at + got}, inside data that should reach ${at + n}`);
      got += r;
    }
    return buf;
  }

  close(): void {
    if (this.open) { this.open = false; closeSync(this.fd); }
  }
}

/** A file written front to back. */
export class FileWriter {
  private readonly fd: number;
  written = 0;

  constructor(path: string) {
    this.fd = openSync(path, 'wx');
  }

  write(b: Uint8Array): void {
    let off = 0;
    while (off < b.length) off += writeSync(this.fd, b, off, b.length - off);
    this.written += b.length;
  }

  /** Flushes the file to the disk (before its directory is renamed into place) and closes it. */
  close(): void {
    try { fsyncSync(this.fd); } finally { closeSync(this.fd); }
  }
}
