export { heldWeights, runProgram, runStep } from './evaluate.js';
export type { HeldMap, OracleOptions, ProgramInputs, StepOutput, TensorMap, TensorMaps, Weight, WeightMap } from './types.js';
