/**
 * The check of a compiled graph's arguments against the program's (docs: "Intel NPU"): names, order,
 * direction, extents and precision, before anything runs. The program's ABI travels in the blob beside
 * the graph's own table (the caller puts it there at compile time, from the program's wiring), so the
 * driver's table is never trusted to describe the program: a compiler that reordered, retyped or
 * reshaped an argument is an ArgumentMismatch at load.
 */
import { ArgumentMismatch } from '../../errors/index.js';
import type { ExpectedArg, GraphArg } from '../../compiler/openvino/blobFormat.js';

const DIRECTION = { in: 'parameter', out: 'result' } as const;

/** Throws ArgumentMismatch(arg, field) at the first argument of the graph that differs from the program's. */
export function checkArguments(expected: readonly ExpectedArg[], graphArgs: readonly GraphArg[]): void {
  const byOrder = [...graphArgs].sort((a, b) => a.order - b.order);
  const names = new Set(byOrder.map((a) => a.name));
  expected.forEach((e, i) => {
    const g = byOrder[i];
    // An argument the graph has at another position was reordered; one it lacks was renamed (or dropped).
    if (!g || g.name !== e.name || g.order !== i) throw new ArgumentMismatch(e.name, names.has(e.name) ? 'order' : 'name');
    if (g.direction !== DIRECTION[e.direction]) throw new ArgumentMismatch(e.name, 'direction');
    if (g.dims.length !== e.shape.length || g.dims.some((d, k) => d !== e.shape[k])) throw new ArgumentMismatch(e.name, 'extent');
    if (g.precision !== e.dtype) throw new ArgumentMismatch(e.name, 'precision');
  });
  const extra = byOrder[expected.length];
  if (extra) throw new ArgumentMismatch(extra.name, 'name');
}
