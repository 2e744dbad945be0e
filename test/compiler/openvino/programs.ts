/** Programs shared by the OpenVINO compiler tests. */
import { lit, program } from '../../../src/ops/builder.js';
import type { CheckedProgram } from '../../../src/ir/checked.js';
import { checkProgram } from '../../../src/ops/validate.js';

/**
 * The golden program: an F32 boundary around FP16 arithmetic, a multiplicative and a saturating
 * additive literal, a reduce, a matmul, a gather, a dynamic_update_slice at a runtime index, a state.
 */
export function representative(): CheckedProgram {
  const p = program('representative');
  const x = p.activation('x', 'f32', [2, 4]);
  const w = p.weight('w', 'f32', [4, 3]);
  const idx = p.activation('idx', 'i32', [2]);
  const pos = p.activation('pos', 'i32', []);
  const acc = p.state('acc', 'f32', [4, 3]);
  const s = p.named('s').mul(x, 0.5);
  const m = p.named('m').matmul(s, w);
  const r = p.named('r').reduceSum(m, [1]);
  const t = p.named('t').add(r, -1e9);
  const g = p.named('g').gather(w, idx, 0);
  const row = p.named('row').slice(m, [0, 0], [1, 3]);
  const acc2 = p.named('acc2').dynamicUpdateSlice(acc, row, [pos, lit(0, 'i32')]);
  p.results(t, g);
  p.carry(acc, acc2);
  return checkProgram(p.build());
}

/** One equation of `op` over an f16 [2, 3] activation `x` (and `y` where it takes two). */
export function f16Binary(op: 'add' | 'sub' | 'mul' | 'div' | 'max' | 'ge'): CheckedProgram {
  const p = program(op);
  const x = p.activation('x', 'f16', [2, 3]);
  const y = p.activation('y', 'f16', [2, 3]);
  p.results(p.named('z')[op](x, y));
  return checkProgram(p.build());
}
