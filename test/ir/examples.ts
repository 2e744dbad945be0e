/** Programs of the format spec (docs/PROGRAM_FORMAT.md), as JSON, shared by the ir tests. */

/** The spec's first example, verbatim. */
export function rmsStep(): Record<string, unknown> {
  return {
    format: 'program@1',
    name: 'rms-step',
    args: [
      { name: 'x', role: 'activation', dtype: 'f32', shape: [4, 64] },
      { name: 'w', role: 'weight', dtype: 'f32', shape: [64] },
      { name: 'acc', role: 'state', dtype: 'f32', shape: [4, 64] },
    ],
    eqns: [
      { op: 'add', in: ['acc', 'x'], out: 'acc2' },
      { op: 'exp', in: ['acc2'], out: 'e' },
      { op: 'mul', in: ['e', { lit: 0.5 }], out: 'y' },
    ],
    results: ['y'],
    state: { acc: 'acc2' },
  };
}

/** The spec's row_kernel example (RMS norm) in a program of its own. */
export function rmsNorm(): Record<string, unknown> {
  return {
    format: 'program@1',
    name: 'rms-norm',
    args: [
      { name: 'x', role: 'activation', dtype: 'f32', shape: [4, 64] },
      { name: 'w', role: 'weight', dtype: 'f32', shape: [64] },
    ],
    eqns: [
      { op: 'row_kernel', in: ['x', 'w'], out: 'y', body: {
        params: ['x', 'w'],
        steps: [
          { op: 'mul', in: ['x', 'x'], out: 'sq' },
          { op: 'reduce_sum', in: ['sq'], out: 'ss' },
          { op: 'div', in: ['ss', { lit: 64 }], out: 'ms' },
          { op: 'add', in: ['ms', { lit: 1e-6 }], out: 'mse' },
          { op: 'sqrt', in: ['mse'], out: 'rms' },
          { op: 'div', in: ['x', 'rms'], out: 'xn' },
          { op: 'mul', in: ['xn', 'w'], out: 'y' },
        ],
        results: ['y'] } },
    ],
    results: ['y'],
    state: {},
  };
}

/** A program using most ops' attributes, literals with wire strings, and a multi-result row kernel. */
export function everyAttr(): Record<string, unknown> {
  return {
    format: 'program@1',
    name: 'every-attr',
    args: [
      { name: 'a', role: 'activation', dtype: 'f32', shape: [2, 3] },
      { name: 'b', role: 'weight', dtype: 'f32', shape: [3, 4] },
      { name: 'i', role: 'activation', dtype: 'i32', shape: [2] },
      { name: 'kv', role: 'state', dtype: 'f32', shape: [8, 4] },
    ],
    eqns: [
      { op: 'matmul', in: ['a', 'b'], out: 'm' },
      { op: 'max', in: ['m', { lit: '-inf' }], out: 'm1' },
      { op: 'min', in: ['m1', { lit: 'inf', dtype: 'f32' }], out: 'm2' },
      { op: 'add', in: ['m2', { lit: '-0' }], out: 'm3' },
      { op: 'convert', in: ['m3'], out: 'h', dtype: 'f16' },
      { op: 'reduce_sum', in: ['m3'], out: 'r', axes: [1] },
      { op: 'transpose', in: ['m3'], out: 'tr', perm: [1, 0] },
      { op: 'reshape', in: ['tr'], out: 'rs', shape: [8] },
      { op: 'broadcast', in: ['r'], out: 'br', shape: [2, 4], dims: [0] },
      { op: 'slice', in: ['m3'], out: 'sl', start: [0, 0], limit: [2, 4], stride: [1, 2] },
      { op: 'concat', in: ['m3', 'br'], out: 'cc', axis: 0 },
      { op: 'iota', in: [], out: 'io', shape: [2, 4], dimension: 1, dtype: 'i32' },
      { op: 'gather', in: ['b', 'i'], out: 'g', axis: 0 },
      { op: 'dynamic_update_slice', in: ['kv', 'cc', { lit: 4, dtype: 'i32' }, { lit: 0 }], out: 'kv2' },
      { op: 'row_kernel', in: ['m3'], out: ['mx', 'sm'], body: {
        params: ['v'],
        steps: [
          { op: 'reduce_max', in: ['v'], out: 'mx' },
          { op: 'sub', in: ['v', 'mx'], out: 'd' },
          { op: 'exp', in: ['d'], out: 'sm' },
          { op: 'mul', in: ['sm', { lit: 'nan' }], out: 'unused' },
        ],
        results: ['mx', 'sm'] } },
      { op: 'all_reduce', in: ['sm'], out: 'ar', reduce: 'sum' },
    ],
    results: ['h', 'rs', 'sl', 'io', 'g', 'mx', 'ar'],
    state: { kv: 'kv2' },
  };
}
