/** exp on the NPU, matmul on the host, two adds (one into the carried state) on the NPU, a convert on the host. */
export const SMALL = {
  format: 'program@1', name: 'small',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [4, 8] },
    { name: 'w', role: 'weight', dtype: 'f32', shape: [8, 8] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [4, 8] },
  ],
  eqns: [
    { op: 'exp', in: ['x'], out: 'a' },
    { op: 'matmul', in: ['a', 'w'], out: 'b' },
    { op: 'add', in: ['b', { lit: 1 }], out: 'c' },
    { op: 'add', in: ['c', 'acc'], out: 'acc2' },
    { op: 'convert', in: ['acc2'], out: 'h', dtype: 'f16' },
  ],
  results: ['c', 'h'],
  state: { acc: 'acc2' },
};

/** SMALL's inputs for `steps` steps: x in [-1, 1], w of 0.1 scale, acc starting at 0.5. */
export function smallInputs(steps: number): Record<string, unknown> {
  const t = (shape: number[], f: (i: number) => number) => ({ dtype: 'f32', shape, data: Array.from({ length: shape[0]! * shape[1]! }, (_, i) => f(i)) });
  return {
    w: t([8, 8], (i) => ((i * 37) % 17 - 8) / 80),
    acc: t([4, 8], () => 0.5),
    x: Array.from({ length: steps }, (_, s) => t([4, 8], (i) => Math.sin(i + 3 * s))),
  };
}

/** A state read on the NPU (add) whose next value the host makes (matmul): it crosses back every step. */
export const CARRY = {
  format: 'program@1', name: 'carry',
  args: [
    { name: 'x', role: 'activation', dtype: 'f32', shape: [4, 8] },
    { name: 'w', role: 'weight', dtype: 'f32', shape: [8, 8] },
    { name: 'acc', role: 'state', dtype: 'f32', shape: [4, 8] },
  ],
  eqns: [
    { op: 'add', in: ['acc', 'x'], out: 'a' },
    { op: 'matmul', in: ['a', 'w'], out: 'acc2' },
  ],
  results: ['a'],
  state: { acc: 'acc2' },
};
