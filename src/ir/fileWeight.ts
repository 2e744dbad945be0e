/**
 * Weights bound from a file: `{ "dtype", "shape", "file", "offset", "length" }` in an inputs file names
 * a byte range of a file (a GGUF tensor, a Q4NX tensor) holding the weight's bytes exactly as `b64`
 * would (src/ir/bytes.ts; a quantized dtype's blocks). Binding checks the range and records the file's
 * identity (its real path, size, mtime and the sha256 of its ends, src/io/fileRange.ts), never its
 * bytes: the weight travels through the engine as this small record, its key is that identity, and
 * the bytes are read (or, on a device that maps files, mapped) only where the weight is uploaded.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { InvalidInput } from '../errors/index.js';
import { fileIdentity, readFileRange, type FileIdentity } from '../io/fileRange.js';
import { fsReason, type FileFailure } from '../io/files.js';
import { quantShapeProblem } from '../numerics/quant.js';
import { heldFromBytes } from './bytes.js';
import { hasOwn, kindOf, ptr } from './pointer.js';
import { ANY_DTYPE_LIST, isAnyDType } from './scalars.js';
import type { HeldTensor } from './tensor.js';
import { isQuantized, storageBytes, type AnyDType, type Shape } from './types.js';

/** A weight bound to a byte range of a file: what the engine carries in place of its bytes. */
export interface FileWeight {
  readonly dtype: AnyDType;
  readonly shape: Shape;
  /** The file's absolute real path (symbolic links resolved when it was bound). */
  readonly file: string;
  readonly offset: number;
  readonly length: number;
  /** The file as it was when bound; reading it later refuses a file whose size or mtime moved. */
  readonly identity: FileIdentity;
  /** The weight's identity as a key: sha256 over the path, the file's identity, the range, dtype and shape. */
  readonly key: string;
}

const KEYS = ['dtype', 'shape', 'file', 'offset', 'length'];

/** True for a wire weight written as a file range (it has a "file" key). */
export function isFileForm(json: Record<string, unknown>): boolean {
  return hasOwn(json, 'file');
}

/** True for a weight bound to a file, as opposed to one held as a tensor. */
export function isFileWeight(w: HeldTensor | FileWeight): w is FileWeight {
  return hasOwn(w, 'file');
}

function whole(v: unknown, at: string, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new InvalidInput(at, `${what} is a non-negative whole number of bytes, not ${kindOf(v)}`);
  return v;
}

/** The key of a bound weight: everything that names its bytes, none of the bytes themselves. */
function fileWeightKey(w: Omit<FileWeight, 'key'>): string {
  const parts = [w.file, w.identity.size, w.identity.mtimeMs, w.identity.sha256Ends, w.offset, w.length, w.dtype, [...w.shape]];
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/**
 * The identities of the files bound so far, by real path: an inputs file binding 300 tensors of one
 * GGUF samples that GGUF once, not 300 times.
 */
export type BoundFiles = Map<string, FileIdentity>;

/**
 * Decodes and binds a file-range weight at JSON pointer `path`: the keys, an absolute path to a regular
 * file, a length equal to the bytes of the dtype and shape, a range inside the file. Refusals are
 * InvalidInput at the key at fault (`/w/file`, `/w/offset`, `/w/length`). `files` shares the identity
 * of a file among the weights of one inputs file.
 */
export function bindFileWeight(json: Record<string, unknown>, path: string, files: BoundFiles = new Map()): FileWeight {
  for (const k of Object.keys(json)) {
    if (!KEYS.includes(k)) throw new InvalidInput(ptr(path, k), `a weight bound from a file has no key "${k}" (it has ${KEYS.map((x) => `"${x}"`).join(', ')})`);
  }
  const dtype = json['dtype'];
  if (!isAnyDType(dtype)) throw new InvalidInput(ptr(path, 'dtype'), `a weight's dtype is ${ANY_DTYPE_LIST}, not ${kindOf(dtype)}`);
  const rawShape = json['shape'];
  if (!Array.isArray(rawShape)) throw new InvalidInput(ptr(path, 'shape'), `a tensor's shape is an array of non-negative integers, not ${kindOf(rawShape)}`);
  const shape = rawShape.map((d, k) => whole(d, ptr(path, 'shape', k), 'a dimension'));
  if (isQuantized(dtype)) {
    const bad = quantShapeProblem(dtype, shape);
    if (bad !== undefined) throw new InvalidInput(bad.axis === null ? ptr(path, 'shape') : ptr(path, 'shape', bad.axis), bad.reason);
  }
  const at = ptr(path, 'file');
  const given = json['file'];
  if (typeof given !== 'string' || given === '') throw new InvalidInput(at, `"file" is a path, not ${kindOf(given)}`);
  // A relative path would mean another file to each process that reads it (a server, a worker).
  if (!isAbsolute(given)) throw new InvalidInput(at, `"file" is an absolute path, not ${JSON.stringify(given)}`);
  const offset = whole(json['offset'], ptr(path, 'offset'), '"offset"');
  const length = whole(json['length'], ptr(path, 'length'), '"length"');
  const want = storageBytes(dtype, shape);
  if (length !== want) {
    throw new InvalidInput(ptr(path, 'length'), `a ${dtype} weight of shape [${shape.join(', ')}] is ${want} bytes${isQuantized(dtype) ? ' of blocks' : ''}, "length" says ${length}`);
  }
  const fail: FileFailure = (p, reason) => new InvalidInput(at, `cannot bind ${p}: ${reason}`);
  let file: string;
  try { file = realpathSync(given); } catch (e) { throw fail(given, fsReason(e)); }
  const identity = files.get(file) ?? fileIdentity(file, { fail });
  files.set(file, identity);
  if (offset + length > identity.size) {
    throw new InvalidInput(ptr(path, 'offset'), `bytes [${offset}, ${offset + length}) end past the ${identity.size} bytes of ${file}`);
  }
  const bound = { dtype, shape, file, offset, length, identity };
  return { ...bound, key: fileWeightKey(bound) };
}

/** A bound weight's bytes, read now; InvalidInput at `/<name>/file` when the file changed since it was bound. */
export function readFileWeightBytes(w: FileWeight, name: string): Uint8Array {
  const at = ptr('', name, 'file');
  return readFileRange(w.file, w.offset, w.length, w.identity, { fail: (p, reason) => new InvalidInput(at, `cannot read weight ${name} from ${p}: ${reason}`) });
}

/** A bound weight read into the tensor it holds (a quantized one keeps its bytes). */
export function readFileWeight(w: FileWeight, name: string): HeldTensor {
  const bytes = readFileWeightBytes(w, name);
  if (w.dtype === 'bool') {
    const k = bytes.findIndex((b) => b > 1);
    if (k >= 0) throw new InvalidInput(ptr('', name, 'file'), `bool element ${k} of weight ${name} is the byte ${bytes[k]}; a bool byte is 0 or 1`);
  }
  return heldFromBytes(w.dtype, w.shape, bytes);
}
