/** The oracle's options; its inputs and outputs are the IR's (src/ir/values.ts), re-exported here. */
export type { HeldMap, ProgramInputs, StepOutput, TensorMap, TensorMaps, Weight, WeightMap } from '../ir/values.js';

export interface OracleOptions {
  /** Compute every equation in f64 with no final rounding (the reference for measuring the oracle). */
  readonly fp64?: boolean;
}
