/**
 * `gguf verify`: decodes every tensor of a packed model directory and compares it, element by element,
 * with the GGUF's dequantized tensor (bounds in compare.ts). A tensor passes when no weight is over
 * its bound; a requantized one must also reach `minCosine` (default 0.99: q4_1 of smooth data gives
 * about 0.997, as Qwen3-0.6B's Q6_K tensors do). config.json must hold what pack derives.
 */
import { join } from 'node:path';
import { escapeControl } from '../../io/escape.js';
import { readRegularFile } from '../../io/files.js';
import { openGguf } from '../gguf/reader.js';
import type { GgufFile } from '../gguf/types.js';
import { CHUNK_BYTES, TILE_COLS, TILE_ROWS, TILE_VALUES } from '../q4nx/chunks.js';
import { readQ4nxHeader, type Q4nxHeader, type Q4nxTensorInfo } from '../q4nx/container.js';
import { decodeQ41Tile } from '../q4nx/decode.js';
import { ErrorStats, bf16RoundingErrors, f32Slack, repackDeltas, requantGroupBound } from './compare.js';
import { packConfig, packTensors } from './arch.js';
import { readSourceFloats, readSourceRows, sourceRowBytes } from './convert.js';
import { FileReader } from './fileRange.js';
import { converterLabel } from './identity.js';
import { STORED_DTYPE, storedShape, type Method, type PlannedTensor } from './plan.js';
import type { PackProgress } from './pack.js';
import { readQ4Row, type ExactType } from './q4Source.js';
import { messageOf } from '../../errors/index.js';
import { parseJsonFile } from '../../ir/jsonText.js';

/** The default cosine a requantized tensor must reach. */
export const DEFAULT_MIN_COSINE = 0.99;

/** The verdict on one tensor. */
export interface TensorCheck {
  readonly name: string;
  readonly sourceType: string;
  readonly method: Method;
  readonly elements: number;
  readonly overBound: number;
  readonly maxError: number;
  /** The largest error divided by its bound. */
  readonly worstRatio: number;
  readonly cosine: number;
  readonly relRms: number;
  readonly pass: boolean;
}

/** The result of verifyPack. */
export interface VerifyReport {
  readonly ok: boolean;
  readonly minCosine: number;
  readonly tensors: readonly TensorCheck[];
  /** Failures that are not one tensor's numbers: a missing or extra tensor, a wrong shape, config.json. */
  readonly problems: readonly string[];
}

/** Options of verifyPack. */
export interface VerifyOptions {
  readonly minCosine?: number;
  readonly onProgress?: (p: PackProgress) => void;
}

function compareQ41(g: FileReader, q: FileReader, at: number, t: PlannedTensor, s: ErrorStats, step: (b: number) => void): void {
  const tq = Math.ceil(t.cols / TILE_COLS);
  const groups = t.cols / 32;
  const scales = new Float64Array(groups);
  const zeros = new Float64Array(groups);
  const codes = new Uint8Array(t.cols);
  const rowBytes = sourceRowBytes(t.sourceType, t.cols);
  const tiles = Array.from({ length: tq }, () => new Float32Array(TILE_VALUES));
  const chunkBuf = new Uint8Array(tq * CHUNK_BYTES.q4_1);
  for (let i = 0; i * TILE_ROWS < t.rows; i++) {
    const first = i * TILE_ROWS;
    const n = Math.min(TILE_ROWS, t.rows - first);
    const raw = readSourceRows(g, t, first, n);
    const ref = readSourceFloats(g, t, first, n);
    const chunks = q.read(at + i * tq * CHUNK_BYTES.q4_1, tq * CHUNK_BYTES.q4_1, chunkBuf);
    tiles.forEach((tile, j) => decodeQ41Tile(chunks.subarray(j * CHUNK_BYTES.q4_1, (j + 1) * CHUNK_BYTES.q4_1), tile));
    for (let r = 0; r < TILE_ROWS; r++) {
      if (r >= n) { padding(tiles, r, 0, tq * TILE_COLS, s); continue; }
      if (t.method === 'repack') readQ4Row(t.sourceType as ExactType, raw.subarray(r * rowBytes, (r + 1) * rowBytes), t.cols, scales, zeros, codes);
      for (let G = 0; G < groups; G++) {
        const tile = tiles[G >> 3]!;
        const base = r * TILE_COLS + (G & 7) * 32;
        const x = r * t.cols + G * 32;
        let groupBound: number;
        let dScale = 0;
        if (t.method === 'repack') [dScale, groupBound] = repackDeltas(scales[G]!, zeros[G]!);
        else {
          let lo = Infinity, hi = -Infinity;
          for (let l = 0; l < 32; l++) { const v = ref[x + l]!; if (v < lo) lo = v; if (v > hi) hi = v; }
          groupBound = requantGroupBound(lo, hi);
        }
        for (let l = 0; l < 32; l++) {
          const dec = tile[base + l]!;
          const want = ref[x + l]!;
          // repack: |Δscale|*code + |Δzero|; requant: the group's encoder bound; both plus one f32 ulp.
          const code = t.method === 'repack' ? codes[G * 32 + l]! : 0;
          s.add(dec, want, dScale * code + groupBound + f32Slack(dec, want));
        }
      }
      padding(tiles, r, t.cols, tq * TILE_COLS, s);
    }
    step(raw.length);
  }
}

/** Padding (rows past the tensor, columns past its width) must decode to exactly 0. */
function padding(tiles: Float32Array[], r: number, from: number, to: number, s: ErrorStats): void {
  for (let k = from; k < to; k++) {
    if (tiles[k >> 8]![r * TILE_COLS + (k & 255)] !== 0) s.overBound++;
  }
}

function compareBf16(g: FileReader, q: FileReader, at: number, t: PlannedTensor, s: ErrorStats, step: (b: number) => void): void {
  const rowsPer = Math.max(1, Math.floor((1 << 20) / t.cols));
  for (let first = 0; first < t.rows; first += rowsPer) {
    const n = Math.min(rowsPer, t.rows - first);
    const ref = readSourceFloats(g, t, first, n);
    const b = q.read(at + first * t.cols * 2, n * t.cols * 2);
    const bound = bf16RoundingErrors(ref);
    const dec = new Float32Array(ref.length);
    const bits = new Uint32Array(dec.buffer);
    for (let i = 0; i < ref.length; i++) bits[i] = ((b[2 * i]! | (b[2 * i + 1]! << 8)) << 16) >>> 0;
    for (let i = 0; i < ref.length; i++) s.add(dec[i]!, ref[i]!, bound[i]!);
    step(n * sourceRowBytes(t.sourceType, t.cols));
  }
}

/** An f32 vector must hold the source's dequantized values exactly. */
function compareF32(g: FileReader, q: FileReader, at: number, t: PlannedTensor, s: ErrorStats, step: (b: number) => void): void {
  const ref = readSourceFloats(g, t, 0, t.rows);
  const b = q.read(at, ref.length * 4);
  const dec = new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  for (let i = 0; i < ref.length; i++) s.add(dec[i]!, ref[i]!, 0);
  step(sourceRowBytes(t.sourceType, t.cols) * t.rows);
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Problems with config.json: unreadable, or a key whose value differs from what pack derives. */
function configProblems(f: GgufFile, ggufPath: string, dir: string): string[] {
  let config: Record<string, unknown>;
  try {
    config = parseJsonFile(readRegularFile(join(dir, 'config.json')).toString('utf8'), join(dir, 'config.json')) as Record<string, unknown>;
  } catch (e) {
    return [`config.json cannot be read as JSON: ${escapeControl(messageOf(e))}`];
  }
  const want = packConfig(f, ggufPath, converterLabel());
  return Object.entries(want)
    .filter(([k, v]) => k !== 'q4nx_source' && !sameJson(config[k], v))
    .map(([k, v]) => escapeControl(`config.json ${k} is ${JSON.stringify(config[k])}, the GGUF gives ${JSON.stringify(v)}`));
}

function shapeProblem(t: PlannedTensor, info: Q4nxTensorInfo | undefined): string | null {
  if (info === undefined) return `${t.name} is missing from model.q4nx`;
  const want = storedShape(t);
  const dtype = STORED_DTYPE[t.store];
  if (info.dtype !== dtype || !sameJson(info.shape, want)) return `${t.name} is ${info.dtype}[${info.shape.join(', ')}], pack writes ${dtype}[${want.join(', ')}]`;
  return null;
}

/** Verifies a packed directory against its GGUF; `ok` says whether every check passed. */
export function verifyPack(ggufPath: string, dir: string, opts: VerifyOptions = {}): VerifyReport {
  const minCosine = opts.minCosine ?? DEFAULT_MIN_COSINE;
  const qPath = join(dir, 'model.q4nx');
  // The header first: a missing or malformed container fails before any file is held open.
  const header: Q4nxHeader = readQ4nxHeader(qPath);
  const f = openGguf(ggufPath);
  const g = new FileReader(ggufPath);
  const q = new FileReader(qPath);
  try {
    const plan = packTensors(f);
    const byName = new Map(header.tensors.map((t) => [t.name, t]));
    const problems = configProblems(f, ggufPath, dir);
    const planned = new Set(plan.map((t) => t.name));
    for (const t of header.tensors) if (!planned.has(t.name)) problems.push(`${t.name} is in model.q4nx but pack does not write it`);
    const totalBytes = plan.reduce((n, t) => n + t.source.byteSize, 0);
    let doneBytes = 0;
    const tensors: TensorCheck[] = [];
    plan.forEach((t, i) => {
      const info = byName.get(t.name);
      const bad = shapeProblem(t, info);
      if (bad !== null || info === undefined) { problems.push(bad ?? t.name); return; }
      const s = new ErrorStats();
      const step = (b: number): void => {
        doneBytes += b;
        opts.onProgress?.({ doneBytes, totalBytes, tensor: t.name, tensorIndex: i, tensorCount: plan.length });
      };
      const at = header.dataStart + info.begin;
      if (t.store === 'q4_1') compareQ41(g, q, at, t, s, step); else if (t.store === 'f32') compareF32(g, q, at, t, s, step); else compareBf16(g, q, at, t, s, step);
      const pass = s.overBound === 0 && (t.method !== 'requant' || s.cosine >= minCosine);
      tensors.push({
        name: t.name, sourceType: t.sourceType, method: t.method, elements: s.elements, overBound: s.overBound,
        maxError: s.maxError, worstRatio: s.worstRatio, cosine: s.cosine, relRms: s.relRms, pass,
      });
    });
    return { ok: problems.length === 0 && tensors.every((t) => t.pass), minCosine, tensors, problems };
  } finally {
    g.close();
    q.close();
    f.close();
  }
}
