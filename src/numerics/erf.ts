// Placeholder so dependents compile; the numerics work replaces it with an accurate erf.
export function erf(x: number): number { return Number.NaN * x; }
