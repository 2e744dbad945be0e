import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileIdentity } from '../../src/io/fileRange.js';
import { isFileWeight, readFileWeight, type FileWeight } from '../../src/ir/fileWeight.js';
import { decodeInputs } from '../../src/ir/inputsCodec.js';
import { isQuantTensor } from '../../src/ir/tensor.js';
import { sourceIdentity } from '../../src/model/pack/stamp.js';
import { program } from '../../src/ops/builder.js';
import { checkProgram } from '../../src/ops/validate.js';
import { randomBlocks } from '../numerics/quantRef.js';
import { refusal } from './helpers.js';

const W_BYTES = 3 * 2 * 18; // q4_0 [3, 64]

function checked() {
  const p = program('fw');
  const x = p.activation('x', 'f32', [2, 64]);
  const w = p.weight('w', 'q4_0', [3, 64]);
  const b = p.weight('b', 'f32', [3]);
  p.results(p.named('y').add(p.matmul(x, w), p.broadcast(b, [2, 3], [1])));
  return checkProgram(p.build());
}

const X = { dtype: 'f32', shape: [2, 64], data: new Array(128).fill(0.5) };
const B = { dtype: 'f32', shape: [3], data: [1, 2, 3] };

describe('ir/fileWeight: weights bound from a byte range of a file', () => {
  let dir: string;
  let file: string;
  let blocks: Uint8Array;
  const OFFSET = 100;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'npuo-fw-'));
    file = join(dir, 'model.bin');
    blocks = randomBlocks('q4_0', [3, 64], 11);
    // Bytes before and after the tensor, as in a GGUF: the range is what counts.
    writeFileSync(file, Buffer.concat([Buffer.alloc(OFFSET, 0xaa), Buffer.from(blocks), Buffer.alloc(50, 0xbb)]));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const bound = (w: Record<string, unknown>, path = file) => decodeInputs({ x: X, b: B, w: { dtype: 'q4_0', shape: [3, 64], file: path, offset: OFFSET, length: W_BYTES, ...w } }, checked()).weights['w']!;
  const bind = (w: Record<string, unknown> = {}, path = file): FileWeight => {
    const got = bound(w, path);
    if (!isFileWeight(got)) throw new Error('not bound to a file');
    return got;
  };

  it('binds the range without reading it into the inputs, and reads exactly its bytes at upload', () => {
    const w = bind();
    expect(w).to.include({ file, offset: OFFSET, length: W_BYTES, dtype: 'q4_0' });
    expect(w.identity.size).to.equal(statSync(file).size);
    expect(w.key).to.match(/^[0-9a-f]{64}$/);
    const t = readFileWeight(w, 'w');
    expect(isQuantTensor(t) && Buffer.from(t.bytes).equals(Buffer.from(blocks))).to.equal(true);
    // A file-range f32 weight too: its little-endian bytes.
    const f32 = join(dir, 'b.bin');
    writeFileSync(f32, Buffer.from(new Float32Array([1.5, -2, 0.25]).buffer));
    const b = decodeInputs({ x: X, w: { dtype: 'q4_0', shape: [3, 64], b64: Buffer.from(blocks).toString('base64') }, b: { dtype: 'f32', shape: [3], file: f32, offset: 0, length: 12 } }, checked()).weights['b']!;
    expect(isFileWeight(b) && Array.from((readFileWeight(b, 'b') as { data: Float64Array }).data)).to.deep.equal([1.5, -2, 0.25]);
  });

  it('names the file by its real path', () => {
    const link = join(dir, 'link.bin');
    symlinkSync(file, link);
    expect(bind({}, link).file).to.equal(file);
    expect(bind({}, link).key).to.equal(bind().key);
  });

  it('refuses a missing file, a non-regular file, a relative path, a range past the end and a wrong length', () => {
    expect(refusal(() => bound({}, join(dir, 'nope.bin')), 'InvalidInput', '/w/file')).to.match(/ENOENT/);
    mkdirSync(join(dir, 'sub'));
    expect(refusal(() => bound({}, join(dir, 'sub')), 'InvalidInput', '/w/file')).to.match(/a directory, not a regular file/);
    expect(refusal(() => bound({}, '/dev/null'), 'InvalidInput', '/w/file')).to.match(/a character device/);
    let fifo: string | undefined = join(dir, 'fifo');
    try { execFileSync('mkfifo', [fifo]); } catch { fifo = undefined; }
    if (fifo !== undefined) expect(refusal(() => bound({}, fifo), 'InvalidInput', '/w/file')).to.match(/FIFO/);
    expect(refusal(() => bound({}, 'model.bin'), 'InvalidInput', '/w/file')).to.match(/absolute path/);
    expect(refusal(() => bound({ offset: OFFSET + 51 }), 'InvalidInput', '/w/offset')).to.match(/end past the 258 bytes/);
    expect(refusal(() => bound({ length: W_BYTES - 1 }), 'InvalidInput', '/w/length')).to.match(/is 108 bytes of blocks, "length" says 107/);
    refusal(() => bound({ offset: -1 }), 'InvalidInput', '/w/offset');
    refusal(() => bound({ shape: [3, 48], length: 3 * 18 }), 'InvalidInput', '/w/shape/1');
    refusal(() => bound({ mmap: true }), 'InvalidInput', '/w/mmap');
    refusal(() => bound({ shape: [2, 64], length: 72 }), 'InvalidInput', '/w/shape');
    // Only a weight is bound from a file; a quantized tensor has no "data" form.
    refusal(() => decodeInputs({ w: { dtype: 'q4_0', shape: [3, 64], b64: '' }, b: B, x: { dtype: 'f32', shape: [2, 64], file, offset: 0, length: 512 } }, checked()), 'InvalidInput', '/x/file');
    refusal(() => decodeInputs({ x: X, b: B, w: { dtype: 'q4_0', shape: [3, 64], data: [] } }, checked()), 'InvalidInput', '/w/data');
  });

  it('keeps its key while the file is unchanged and changes it with the mtime, the size or the sampled bytes', () => {
    const first = bind().key;
    expect(bind().key).to.equal(first);
    const st = statSync(file);
    utimesSync(file, st.atime, new Date(st.mtimeMs + 5000));
    const touched = bind().key;
    expect(touched).to.not.equal(first);
    // Same size, same mtime, another byte: the digest of the file's ends tells them apart.
    const before = statSync(file);
    writeFileSync(file, Buffer.concat([Buffer.alloc(OFFSET, 0xab), Buffer.from(blocks), Buffer.alloc(50, 0xbb)]));
    utimesSync(file, before.atime, before.mtime);
    expect(statSync(file).mtimeMs).to.equal(before.mtimeMs);
    const rewritten = bind().key;
    expect(rewritten).to.not.equal(touched);
    appendFileSync(file, 'x');
    expect(bind().key).to.not.equal(rewritten);
  });

  it('refuses to read a file that changed since it was bound', () => {
    const w = bind();
    appendFileSync(file, 'more');
    expect(refusal(() => readFileWeight(w, 'w'), 'InvalidInput', '/w/file')).to.match(/changed since it was bound/);
  });

  it('shares the repack stamp\'s identity: size, mtime and the sha256 of the first and last MiB', () => {
    const big = join(dir, 'big.bin');
    const bytes = Buffer.alloc(3 * 2 ** 20 + 17);
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i >> 12) & 0xff;
    writeFileSync(big, bytes);
    // Whole seconds, so putting the mtime back below restores it exactly.
    utimesSync(big, 1_700_000_000, 1_700_000_000);
    const want = createHash('sha256').update(bytes.subarray(0, 2 ** 20)).update(bytes.subarray(bytes.length - 2 ** 20)).digest('hex');
    const id = fileIdentity(big);
    expect(id.sha256Ends).to.equal(want);
    expect(sourceIdentity(big)).to.deep.equal({ name: 'big.bin', ...id });
    // What a sampled digest cannot see: a change only in the middle, with size and mtime put back.
    bytes[3 * 2 ** 19] = 0xff;
    writeFileSync(big, bytes);
    utimesSync(big, 1_700_000_000, 1_700_000_000);
    expect(fileIdentity(big)).to.deep.equal(id);
  });
});
