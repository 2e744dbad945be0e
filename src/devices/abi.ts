/**
 * The recording ABI of a whole-program artifact (documented in device.ts): the binding names and byte
 * sizes a run of a checked program takes. The engine allocates and binds by these; a device refuses a
 * dispatch that differs from them.
 */
import type { CheckedProgram } from '../ir/checked.js';
import type { ArtifactArg } from './device.js';
import { byteSize } from './device.js';

/** The binding name of a program result. */
export function resultBinding(name: string): string {
  return `result:${name}`;
}

/** The binding name of a state arg's value after the step. */
export function stateBinding(argName: string): string {
  return `state:${argName}`;
}

/** The arguments of a program's artifact: its args (in), its distinct results and new state (out). */
export function programAbi(checked: CheckedProgram): ArtifactArg[] {
  const p = checked.program;
  const out: ArtifactArg[] = p.args.map((a) => ({ name: a.name, direction: 'in', dtype: a.dtype, shape: [...a.shape], bytes: byteSize(a.dtype, a.shape) }));
  // A name listed twice in `results` is one value, so it is one output buffer.
  for (const r of new Set(p.results)) {
    const t = checked.types.get(r);
    if (!t) throw new Error(`checked program has no type for result ${r}`);
    out.push({ name: resultBinding(r), direction: 'out', dtype: t.dtype, shape: [...t.shape], bytes: byteSize(t.dtype, t.shape) });
  }
  for (const a of p.args) {
    if (a.role !== 'state') continue;
    out.push({ name: stateBinding(a.name), direction: 'out', dtype: a.dtype, shape: [...a.shape], bytes: byteSize(a.dtype, a.shape) });
  }
  return out;
}
