/**
 * `npu-offload q4nx check <dir>` and `q4nx detect-q8 <dir>`: look at a Q4NX model directory's
 * `model.q4nx` without dequantizing it. `check` reads the container header only and names each
 * quantized tensor's chunk kind; `detect-q8` reads a few tiles of each Q8 tensor and decides their
 * code order, from the data or against a GGUF of the same model. Exit codes: 0 done, 1 a typed
 * refusal (Q4nxError, GgufError), 2 the command was called wrongly.
 */
import { closeSync, existsSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors/index.js';
import { openRegularFile } from '../io/files.js';
import { dequantize } from '../model/gguf/dequant.js';
import { ggmlType } from '../model/gguf/ggmlTypes.js';
import { openGguf } from '../model/gguf/reader.js';
import type { GgufFile, GgufTensorInfo } from '../model/gguf/types.js';
import { isQuantized, logicalShapeFromMetadata, quantLayout, type QuantLayout } from '../model/q4nx/chunks.js';
import { readQ4nxHeader, type Q4nxHeader, type Q4nxTensorInfo } from '../model/q4nx/container.js';
import { detectQ8Layout, detectQ8LayoutAgainst, sampleTiles, type Q8Detection } from '../model/q4nx/detectQ8.js';
import { readChunksFromFile } from '../model/q4nx/fileChunks.js';
import { ggufNamesOf } from '../model/q4nx/names.js';
import type { CliCommand } from './command.js';
import { jsonOption } from './options.js';
import { EXIT, reportError, type Io } from './output.js';

/** The flags of `q4nx check`. */
export interface Q4nxCheckOptions { readonly json?: boolean }
/** The flags of `q4nx detect-q8`: `gguf` is a GGUF of the same model to compare tile (0, 0) with. */
export interface Q4nxDetectQ8Options { readonly json?: boolean; readonly gguf?: string }

function containerOf(dir: string): { file: string; header: Q4nxHeader } {
  const file = join(dir, 'model.q4nx');
  if (!existsSync(file)) throw new UsageError(`${dir} is not a Q4NX model directory: it has no model.q4nx`);
  return { file, header: readQ4nxHeader(file) };
}

function layoutOf(header: Q4nxHeader, t: Q4nxTensorInfo): QuantLayout | null {
  return isQuantized(t) ? quantLayout(t, logicalShapeFromMetadata(header.metadata, t.name)) : null;
}

function table(rows: readonly (readonly string[])[], io: Io): void {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  for (const r of rows) io.out(r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd());
}

/** Checks a model directory's container header and names each tensor's chunk kind; returns the exit code. */
export function q4nxCheckCommand(dir: string, opts: Q4nxCheckOptions, io: Io): number {
  const json = opts.json === true;
  try {
    const { file, header } = containerOf(dir);
    const tensors = header.tensors.map((t) => {
      const l = layoutOf(header, t);
      return {
        name: t.name, dtype: t.dtype, shape: [...t.shape], bytes: t.end - t.begin,
        kind: l?.kind ?? ('plain' as const), chunkBytes: l?.chunkBytes ?? null, tiles: l?.tiles ?? null,
        grid: l?.grid ?? null, logicalShape: l?.logical ?? null,
      };
    });
    const counts = { q4_1: 0, q4k: 0, q8: 0, plain: 0 };
    for (const t of tensors) counts[t.kind]++;
    if (json) {
      io.out(JSON.stringify({ file, headerBytes: header.headerBytes, dataBytes: header.dataBytes, metadata: header.metadata, tensors, counts }));
      return EXIT.ok;
    }
    if (tensors.length > 0) {
      table([
        ['NAME', 'KIND', 'DTYPE', 'SHAPE', 'TILES', 'GRID'],
        ...tensors.map((t) => [t.name, t.kind, t.dtype, `[${t.shape.join(', ')}]`, t.tiles === null ? '-' : String(t.tiles), t.grid === null ? '-' : `${t.grid[0]}x${t.grid[1]}`]),
      ], io);
    }
    io.out(`ok: ${tensors.length} tensors in ${file}: ${counts.q4_1} q4_1, ${counts.q4k} q4k, ${counts.q8} q8, ${counts.plain} plain`);
    if (counts.q8 > 0) io.out('note: the file does not record which code order its Q8 tensors use; run q4nx detect-q8');
    return EXIT.ok;
  } catch (e) {
    return reportError(e, io, json);
  }
}

/** Reads rows [0, n) of a 2-D GGUF tensor (ne[0] = columns) and dequantizes just those. */
function ggufRows(path: string, t: GgufTensorInfo, n: number): Float32Array {
  const cols = t.dims[0]!;
  const info = ggmlType(t.type)!;
  const count = n * cols;
  const bytes = new Uint8Array((count / info.blockSize) * info.typeSize);
  const { fd } = openRegularFile(path, { what: 'GGUF' });
  try {
    let off = 0;
    while (off < bytes.length) {
      const r = readSync(fd, bytes, off, bytes.length - off, t.fileOffset + off);
      if (r === 0) break;
      off += r;
    }
  } finally {
    closeSync(fd);
  }
  return dequantize(t.type, bytes, count, t.fileOffset);
}

interface GgufComparison { readonly tensor: string | null; readonly detection: Q8Detection | null; readonly note?: string }

function compareWithGguf(path: string, gguf: GgufFile, name: string, chunk0: Uint8Array): GgufComparison {
  const t = [...ggufNamesOf(name), name].map((n) => gguf.tensor(n)).find((x) => x !== undefined);
  if (t === undefined) return { tensor: null, detection: null, note: 'no matching tensor in the GGUF' };
  if (t.dims.length !== 2) return { tensor: t.name, detection: null, note: `GGUF tensor has ${t.dims.length} dimensions, not 2` };
  const [cols, rows] = [t.dims[0]!, t.dims[1]!];
  const nr = Math.min(rows, 32);
  const ref = ggufRows(path, t, nr);
  return { tensor: t.name, detection: detectQ8LayoutAgainst(chunk0, (r, k) => ref[r * cols + k]!, nr, Math.min(cols, 256)) };
}

const pct = (v: number | undefined): string => (v === undefined ? '-' : v.toFixed(3));

/** Decides the code order of every Q8 tensor in a model directory; returns the exit code. */
export function q4nxDetectQ8Command(dir: string, opts: Q4nxDetectQ8Options, io: Io): number {
  const json = opts.json === true;
  let gguf: GgufFile | null = null;
  try {
    const { file, header } = containerOf(dir);
    if (opts.gguf !== undefined) gguf = openGguf(opts.gguf);
    const results = [];
    for (const t of header.tensors) {
      const layout = layoutOf(header, t);
      if (layout === null || layout.kind !== 'q8') continue;
      const indices = sampleTiles(layout.tiles);
      const chunks = readChunksFromFile(file, header, t, layout, indices);
      const data = detectQ8Layout(chunks);
      const cmp = gguf === null ? null : compareWithGguf(opts.gguf!, gguf, t.name, chunks[0]!);
      // A decided comparison with the GGUF outranks the data's own signals.
      const decisive = cmp?.detection?.verdict !== undefined && cmp.detection.verdict !== 'undecided' ? cmp.detection : data;
      results.push({ name: t.name, tiles: layout.tiles, sampled: indices, verdict: decisive.verdict, score: decisive.score, method: decisive.method, data, gguf: cmp });
    }
    if (json) {
      io.out(JSON.stringify({ file, tensors: results }));
      return EXIT.ok;
    }
    if (results.length === 0) {
      io.out(`no Q8 tensors in ${file}`);
      return EXIT.ok;
    }
    table([
      ['NAME', 'FULL-RANGE a/b', 'ROUGHNESS a/b', 'GGUF CORR a/b', 'SCORE', 'VERDICT'],
      ...results.map((r) => [
        r.name, `${pct(r.data.fullRange?.a)}/${pct(r.data.fullRange?.b)}`, `${pct(r.data.roughness?.a)}/${pct(r.data.roughness?.b)}`,
        r.gguf?.detection ? `${pct(r.gguf.detection.correlation?.a)}/${pct(r.gguf.detection.correlation?.b)}` : r.gguf ? (r.gguf.note ?? '-') : '-',
        r.score.toFixed(2), `${r.verdict} (${r.method})`,
      ]),
    ], io);
    io.out('layout-a: code (r, k) at byte k*32 + r; layout-b: at (r/16)*4096 + k*16 + r%16; score > 0 favours a, |score| is the confidence');
    return EXIT.ok;
  } catch (e) {
    return reportError(e, io, json);
  } finally {
    gguf?.close();
  }
}

/** `q4nx check|detect-q8 DIR`. */
export const q4nx: CliCommand = {
  register(cli, { io, action }) {
    const group = cli.command('q4nx').description('Q4NX model directories');
    group.command('check').description('read the container header only; name each quantized tensor\'s chunk kind')
      .argument('<dir>', 'a model directory holding model.q4nx')
      .addOption(jsonOption())
      .action(action((d: string, o: Q4nxCheckOptions) => q4nxCheckCommand(d, o, io)));
    group.command('detect-q8').description('decide each Q8 tensor\'s code layout from its data (or against a GGUF)')
      .argument('<dir>', 'a model directory holding model.q4nx')
      .option('--gguf <file>', 'a GGUF of the same model to correlate against')
      .addOption(jsonOption())
      .action(action((d: string, o: Q4nxDetectQ8Options) => q4nxDetectQ8Command(d, o, io)));
  },
};
