/** The oracle's inputs and outputs. */
import type { Tensor } from '../ir/tensor.js';

export type TensorMap = Readonly<Record<string, Tensor>>;

/** What a program runs on: weights and initial state once, activation contents once per step. */
export interface ProgramInputs {
  readonly weights: TensorMap;
  readonly state: TensorMap;
  /** One map of activation contents per step. */
  readonly steps: readonly TensorMap[];
}

export interface StepOutput {
  /** Results by name, in the program's `results` order. */
  readonly results: TensorMap;
  /** The carried state after the step, by state arg name. */
  readonly state: TensorMap;
}

export interface OracleOptions {
  /** Compute every equation in f64 with no final rounding (the reference for measuring the oracle). */
  readonly fp64?: boolean;
}

/** The values one step runs on, by arg name and role. */
export interface TensorMaps {
  readonly weights: TensorMap;
  readonly state: TensorMap;
  readonly activations: TensorMap;
}
