export { runProgram, runStep } from './evaluate.js';
export type { OracleOptions, ProgramInputs, StepOutput, TensorMap, TensorMaps } from './types.js';
