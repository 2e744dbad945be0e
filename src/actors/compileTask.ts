/** The compiler pool's task: one program (JSON form) for one target, to artifact bytes. */
import { compileCpu } from '../compiler/cpu.js';
import { parseProgram } from '../ir/codec.js';
import { checkProgram } from '../ir/validate.js';
import { resolveTarget } from '../targets/index.js';
import { transfer } from './transfer.js';

export interface CompileTask {
  readonly target: string;
  readonly programJson: unknown;
}

/** Compiles one program; the result's buffer is transferred, not copied. */
export function compileTask(task: CompileTask): Uint8Array {
  const t = resolveTarget(task.target);
  const checked = checkProgram(parseProgram(task.programJson));
  switch (t.name) {
    case 'cpu': {
      const a = compileCpu(checked);
      const out = a.bytes.byteOffset === 0 && a.bytes.byteLength === a.bytes.buffer.byteLength ? a.bytes : a.bytes.slice();
      return transfer(out, [out.buffer as ArrayBuffer]);
    }
    case 'xdna2': case 'npu4':
      throw new Error(`no compiler for ${t.name}`); // resolveTarget refuses these first
  }
}
