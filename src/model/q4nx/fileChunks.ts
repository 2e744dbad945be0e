/**
 * Reading chosen chunks of a tensor straight from a container file, so tools that look at a few tiles
 * of a multi-gigabyte model read kilobytes, not the whole file.
 */
import { closeSync, readSync } from 'node:fs';
import { Q4nxError } from '../../errors/index.js';
import { openRegularFile } from '../../io/files.js';
import { q4nxReadError, type Q4nxHeader, type Q4nxTensorInfo } from './container.js';
import type { QuantLayout } from './chunks.js';

/** Reads chunks `indices` of a tensor from the file its header came from. */
export function readChunksFromFile(path: string, header: Q4nxHeader, info: Q4nxTensorInfo, layout: QuantLayout, indices: readonly number[]): Uint8Array[] {
  const { fd } = openRegularFile(path, { fail: q4nxReadError });
  try {
    return indices.map((i) => {
      if (!(Number.isSafeInteger(i) && i >= 0 && i < layout.tiles)) throw new Q4nxError(info.name, `chunk ${i} is outside its ${layout.tiles} tiles`);
      const at = header.dataStart + info.begin + i * layout.chunkBytes;
      const buf = new Uint8Array(layout.chunkBytes);
      let off = 0;
      while (off < buf.length) {
        const n = readSync(fd, buf, off, buf.length - off, at + off);
        if (n === 0) throw new Q4nxError(info.name, `file ended inside chunk ${i}`);
        off += n;
      }
      return buf;
    });
  } finally {
    closeSync(fd);
  }
}
