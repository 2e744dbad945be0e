/**
 * The NPU4 backend. The whole program is one unit: one graph, one compiled blob, one replay per step.
 * Compiling is narrow (when the target records a contract) + write IR + the vendor compiler
 * (vendorCompiler.ts, the simulated driver's), whose blob is the artifact. The cache
 * identity's region is the IR itself (.xml and .bin), the vendor compiler's version and the options, so
 * a change to any of them compiles again. The wiring is the whole-program ABI of the ORIGINAL program:
 * the F32 boundary lives inside the graph, so the graph's arguments are the program's own.
 */
import type { CheckedProgram } from '../../ir/checked.js';
import type { Npu4Target } from '../../targets/npu4/index.js';
import { NPU4_TARGET } from '../../targets/npu4/index.js';
import { wholeProgramLayout, type Backend, type CompilerId } from '../backend.js';
import { wholeProgramWiring } from '../wiring.js';
import type { WrittenIr } from './irWriter.js';
import { writeIr } from './irWriter.js';
import { narrowToDevicePrecision } from './narrow.js';
import { compileIrToBlob } from './vendorCompiler.js';
import { VENDOR_COMPILER, expectedArgs } from './blobFormat.js';

/** Our side of the compile: the narrowing pass and the IR writer (bump when their bytes change). */
export const NPU4_COMPILER: CompilerId = { name: 'npu-offload-openvino-ir', version: '1' };

/** The IR a target compiles a program to: narrowed first when the target records a contract. */
export function irOf(checked: CheckedProgram, target: Npu4Target = NPU4_TARGET): Pick<WrittenIr, 'xml' | 'bin'> {
  const graph = target.contract === null ? checked : narrowToDevicePrecision(checked, target.contract.maxMagnitude);
  const { xml, bin } = writeIr(graph);
  return { xml, bin };
}

/** The backend of an NPU4 target (NPU4_BACKEND for the target with its contract). */
export function npu4Backend(target: Npu4Target = NPU4_TARGET): Backend {
  const options = { narrow: target.contract !== null, contract: target.contract };
  return {
    target,
    compiler: NPU4_COMPILER,
    options,
    units(checked) {
      const ir = irOf(checked, target);
      const region = { xml: ir.xml, bin: Buffer.from(ir.bin).toString('base64'), vendorCompiler: VENDOR_COMPILER.version, options };
      return [{ region, wiring: wholeProgramWiring(checked) }];
    },
    layout: wholeProgramLayout,
    compile(checked) {
      const ir = irOf(checked, target);
      // The caller's ABI goes with the IR, so the blob's argument table is checked against the program's.
      return compileIrToBlob(ir.xml, ir.bin, { expected: expectedArgs(wholeProgramWiring(checked)) });
    },
  };
}

/** The NPU4 backend, for the target with its narrowing contract. */
export const NPU4_BACKEND: Backend = npu4Backend();
