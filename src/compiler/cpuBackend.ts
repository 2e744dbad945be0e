/** The CPU target's backend: the whole program is one artifact, wired by the whole-program ABI. */
import { programToJson } from '../ir/codec.js';
import { CPU_TARGET } from '../targets/cpu/index.js';
import { wholeProgramLayout, type Backend } from './backend.js';
import { CPU_COMPILER, compileCpu } from './cpu.js';
import { wholeProgramWiring } from './wiring.js';

export const CPU_BACKEND: Backend = {
  target: CPU_TARGET,
  compiler: CPU_COMPILER,
  options: {},
  units(checked, plan) {
    return [{ region: { program: programToJson(checked.program), eqns: plan.regions.map((r) => r.eqns) }, wiring: wholeProgramWiring(checked) }];
  },
  layout: wholeProgramLayout,
  compile(checked) {
    return compileCpu(checked).bytes;
  },
};
