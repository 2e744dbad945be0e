/**
 * How the host lowers a reduction over any axes (src/compiler/host/axes.ts), as the admission table
 * and the backend both ask it: the operand's dims merged into runs of axes kept or reduced together,
 * and whether the reduced ones must first be copied last (a strided copy of rank <= 4).
 */

/** The operand's dims merged into runs of kept or reduced axes: [extent, reduced] per run. */
export function axisRuns(shape: readonly number[], axes: readonly number[]): [number, boolean][] {
  const runs: [number, boolean][] = [];
  shape.forEach((d, k) => {
    const red = axes.includes(k);
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === red) last[0] *= d;
    else runs.push([d, red]);
  });
  return runs;
}

/** The rank of the strided copy that brings the reduced runs last, or 0 when they already are one trailing run. */
export function reduceCopyRank(shape: readonly number[], axes: readonly number[]): number {
  const runs = axisRuns(shape, axes);
  const reduced = runs.filter(([, r]) => r).length;
  return reduced === 0 || (reduced === 1 && runs[runs.length - 1]![1]) ? 0 : runs.length;
}
