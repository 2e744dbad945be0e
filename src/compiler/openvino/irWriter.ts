/**
 * The whole program as one OpenVINO IR v11 model. Parameters are the program's args in order, named by
 * arg name; Results are its distinct results (`result:<name>`) then each state arg's next value
 * (`state:<arg>`), the whole-program ABI of src/compiler/wiring.ts, so the device wires the graph by
 * name. Every value the equations read in between stays inside the graph. The bytes are a pure
 * function of the checked program: same program, same .xml and .bin.
 */
import type { CheckedEqn, CheckedProgram } from '../../ir/checked.js';
import { elementDtype, isLiteral, numel } from '../../ir/types.js';
import { resultBinding, stateBinding } from '../wiring.js';
import type { PortRef } from './graph.js';
import { IrGraph } from './graph.js';
import type { IrModel } from './irModel.js';
import { elementTypeOf } from './irModel.js';
import { lowerEqn } from './lower.js';
import { modelToXml } from './xml.js';

/** An IR as files: the .xml text, the .bin bytes, and the model both describe. */
export interface WrittenIr {
  readonly xml: string;
  readonly bin: Uint8Array;
  readonly model: IrModel;
}

/**
 * Equations whose value is one of their operands unchanged: the opset has no Slice or ScatterNDUpdate
 * of a scalar, and a scatter of no elements is the operand itself.
 */
function passThrough(e: CheckedEqn): number | undefined {
  const rank = e.ins[0]?.shape.length;
  if (e.op === 'slice' && rank === 0) return 0;
  if (e.op === 'dynamic_update_slice') {
    if (rank === 0) return 1;
    if (numel(e.ins[1]!.shape) === 0) return 0;
  }
  return undefined;
}

/** Lowers a checked program (narrowed first, when the target records a contract) to IR v11 files. */
export function writeIr(checked: CheckedProgram): WrittenIr {
  const p = checked.program;
  const g = new IrGraph();
  const values = new Map<string, PortRef>();
  const valueOf = (name: string): PortRef => {
    const v = values.get(name);
    if (v === undefined) throw new Error(`IR writer: ${name} has no port (the program is not checked)`);
    return v;
  };
  for (const a of p.args) values.set(a.name, g.parameter(a.name, { element: elementTypeOf(elementDtype(a.dtype, `arg ${a.name}`)), shape: a.shape }));
  let literals = 0;
  const cx = {
    graph: g,
    operand(e: CheckedEqn, k: number): PortRef {
      const o = e.eqn.in[k]!;
      if (!isLiteral(o)) return valueOf(o);
      // A literal is a scalar Const of its resolved dtype; the opset's numpy broadcasting spreads it.
      const owner = typeof e.eqn.out === 'string' ? e.eqn.out : e.eqn.out[0]!;
      return g.constant(`${owner}/lit${literals++}`, { element: elementTypeOf(elementDtype(e.ins[k]!.dtype, `literal ${k} of equation ${e.index}`)), shape: [] }, [o.lit]);
    },
  };
  for (const e of checked.eqns) {
    const out = typeof e.eqn.out === 'string' ? e.eqn.out : e.eqn.out[0]!;
    const same = passThrough(e);
    values.set(out, same === undefined ? lowerEqn(cx, e) : cx.operand(e, same));
  }
  for (const r of new Set(p.results)) g.result(resultBinding(r), valueOf(r));
  for (const a of p.args) if (a.role === 'state') g.result(stateBinding(a.name), valueOf(p.state[a.name]!));
  const { model, bin } = g.finish(p.name);
  return { xml: modelToXml(model), bin, model };
}
