/**
 * Hostile cases of the `quant` part of issue 11 (items 1 and 2): quantized dtypes where a program may
 * not have them, quantized tensors of the wrong size, and weights bound from files that are missing,
 * short, of the wrong length, FIFOs or devices. Every one is a typed refusal (exit 1), none hangs.
 */
import { expect } from 'chai';
import { join } from 'node:path';
import type { HostileCase } from './case.js';
import { fifo, put } from './fixtures.js';

/** y = x . w^T with w a q4_0 weight [3, 32]. */
const MATMUL = {
  format: 'program@1', name: 'qmm',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [2, 32] },
    { name: 'w', role: 'weight', dtype: 'q4_0', shape: [3, 32] },
  ],
  eqns: [{ op: 'matmul', in: ['x', 'w'], out: 'y' }],
  results: ['y'],
};

const X = { dtype: 'f32', shape: [2, 32], data: new Array(64).fill(1) };
const W_BYTES = 3 * 18;

/** One q4_0 block row after another: d = 1.0 (0x3c00), codes 9 (value +1). */
function blocks(): Uint8Array {
  const b = new Uint8Array(W_BYTES);
  for (let i = 0; i < 3; i++) {
    b[i * 18] = 0x00;
    b[i * 18 + 1] = 0x3c;
    b.fill(0x99, i * 18 + 2, i * 18 + 18);
  }
  return b;
}

/** The program and an inputs file binding w to `file` (a path under the case folder, or absolute). */
function bound(d: string, file: string, range: { offset?: number; length?: number } = {}): void {
  put(d, 'p.json', MATMUL);
  const path = file.startsWith('/') ? file : join(d, file);
  put(d, 'in.json', { x: X, w: { dtype: 'q4_0', shape: [3, 32], file: path, offset: range.offset ?? 8, length: range.length ?? W_BYTES } });
}

const run = ['run', 'p.json', '--target', 'cpu', '--inputs', 'in.json', '--json'];

/** matmul_id: x [2, 1, 32] by 2 experts of 3 q4_0 rows (every value +1), chosen by ids [2, 1]. */
const MOE = {
  format: 'program@1', name: 'moe',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [2, 1, 32] },
    { name: 'w', role: 'weight', dtype: 'q4_0', shape: [2, 3, 32] },
    { name: 'ids', role: 'activation', dtype: 'i32', shape: [2, 1] },
  ],
  eqns: [{ op: 'matmul_id', in: ['x', 'w', 'ids'], out: 'y' }],
  results: ['y'],
};

/** The MoE program with its experts bound from a file and `ids`. */
function moe(d: string, ids: readonly number[]): void {
  put(d, 'w.bin', Buffer.concat([Buffer.from(blocks()), Buffer.from(blocks())]));
  put(d, 'p.json', MOE);
  put(d, 'in.json', { x: { ...X, shape: [2, 1, 32] }, w: { dtype: 'q4_0', shape: [2, 3, 32], file: join(d, 'w.bin'), offset: 0, length: 2 * W_BYTES }, ids: { dtype: 'i32', shape: [2, 1], data: ids } });
}

const runHost = ['run', 'p.json', '--target', 'host', '--inputs', 'in.json', '--json'];

export const cases: readonly HostileCase[] = [
  {
    name: 'run with a q4_0 weight bound from a byte range of a file computes x . w^T (exit 0)',
    setup: (d) => { put(d, 'w.bin', Buffer.concat([Buffer.alloc(8), Buffer.from(blocks()), Buffer.alloc(4)])); bound(d, 'w.bin'); },
    cli: run, exit: 0,
    check: (r) => {
      const out = JSON.parse(r.stdout) as { results: { y: { b64: string } } };
      expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(out.results.y.b64, 'base64')).buffer))).to.deep.equal(new Array(6).fill(32));
    },
  },
  { name: 'a weight bound to a file that does not exist is InvalidInput', setup: (d) => bound(d, 'missing.bin'), cli: run, exit: 1, code: 'InvalidInput' },
  {
    name: 'a weight bound to a FIFO is refused without opening it for reading (no hang)',
    setup: (d) => { fifo(d, 'pipe'); bound(d, 'pipe'); }, ownProcess: 'hang', cli: run, exit: 1, code: 'InvalidInput', timeoutMs: 15_000,
  },
  { name: 'a weight bound to /dev/zero is refused as a character device', setup: (d) => bound(d, '/dev/zero'), ownProcess: 'memory', cli: run, exit: 1, code: 'InvalidInput' },
  { name: 'a weight bound to a directory is refused', setup: (d) => { put(d, 'dir/x', 'x'); bound(d, 'dir'); }, cli: run, exit: 1, code: 'InvalidInput' },
  {
    name: 'a weight range past the end of its file is InvalidInput',
    setup: (d) => { put(d, 'w.bin', Buffer.from(blocks())); bound(d, 'w.bin', { offset: 1 }); }, cli: run, exit: 1, code: 'InvalidInput',
    check: (r) => expect(r.stdout).to.contain('/w/offset'),
  },
  {
    name: 'a weight length that is not the bytes of its blocks is InvalidInput at /w/length',
    setup: (d) => { put(d, 'w.bin', Buffer.alloc(200)); bound(d, 'w.bin', { length: W_BYTES + 1 }); }, cli: run, exit: 1, code: 'InvalidInput',
    check: (r) => expect(r.stdout).to.contain('/w/length'),
  },
  {
    name: 'a quantized weight of the wrong byte count in b64 is InvalidInput',
    setup: (d) => { put(d, 'p.json', MATMUL); put(d, 'in.json', { x: X, w: { dtype: 'q4_0', shape: [3, 32], b64: Buffer.alloc(W_BYTES - 2).toString('base64') } }); },
    cli: run, exit: 1, code: 'InvalidInput',
  },
  {
    name: 'an activation bound from a file is InvalidInput (only a weight is)',
    setup: (d) => { put(d, 'w.bin', Buffer.alloc(512)); put(d, 'p.json', MATMUL); put(d, 'in.json', { x: { dtype: 'f32', shape: [2, 32], file: join(d, 'w.bin'), offset: 0, length: 256 }, w: { dtype: 'q4_0', shape: [3, 32], b64: Buffer.from(blocks()).toString('base64') } }); },
    cli: run, exit: 1, code: 'InvalidInput',
  },
  {
    name: 'a quantized activation is InvalidProgram',
    setup: (d) => put(d, 'p.json', { ...MATMUL, args: [MATMUL.args[0], { ...MATMUL.args[1], role: 'activation' }] }),
    cli: ['validate', 'p.json', '--json'], exit: 1, code: 'InvalidProgram',
  },
  {
    name: 'a quantized weight whose blocked axis is not whole blocks is InvalidProgram',
    setup: (d) => put(d, 'p.json', { ...MATMUL, args: [MATMUL.args[0], { ...MATMUL.args[1], shape: [3, 40] }] }),
    cli: ['validate', 'p.json', '--json'], exit: 1, code: 'InvalidProgram',
    check: (r) => expect(r.stdout).to.contain('/args/1/shape/1'),
  },
  {
    name: 'a quantized weight given to an op that does not take one is InvalidProgram at the operand',
    setup: (d) => put(d, 'p.json', { ...MATMUL, eqns: [{ op: 'exp', in: ['w'], out: 'y' }] }),
    cli: ['validate', 'p.json', '--json'], exit: 1, code: 'InvalidProgram',
    check: (r) => expect(r.stdout).to.contain('/eqns/0/in/0'),
  },
  {
    name: 'matmul_id on host by experts [2, 3, 32] mapped from a file computes each chosen expert (exit 0)',
    setup: (d) => moe(d, [1, 0]), cli: runHost, exit: 0,
    check: (r) => {
      const out = JSON.parse(r.stdout) as { results: { y: { b64: string } } };
      expect(Array.from(new Float32Array(new Uint8Array(Buffer.from(out.results.y.b64, 'base64')).buffer))).to.deep.equal(new Array(6).fill(32));
    },
  },
  { name: 'matmul_id with an expert id past the experts is IndexOutOfRange on host', setup: (d) => moe(d, [2, 0]), cli: runHost, exit: 1, code: 'IndexOutOfRange' },
  { name: 'matmul_id with a negative expert id is IndexOutOfRange on cpu', setup: (d) => moe(d, [0, -1]), cli: run, exit: 1, code: 'IndexOutOfRange' },
  {
    name: 'matmul_id on the xdna2 is refused as CapabilityMissing (op.matmul_id)',
    setup: (d) => put(d, 'p.json', { ...MOE, args: [MOE.args[0], { ...MOE.args[1], dtype: 'f32' }, MOE.args[2]] }),
    cli: ['plan', 'p.json', '--target', 'xdna2', '--json'], exit: 1, code: 'CapabilityMissing',
    check: (r) => expect(r.stdout).to.contain('op.matmul_id'),
  },
  {
    name: 'a quantized weight on a target that takes none is CapabilityMissing',
    setup: (d) => put(d, 'p.json', MATMUL),
    cli: ['plan', 'p.json', '--target', 'xdna2', '--json'], exit: 1, code: 'CapabilityMissing',
  },
];
