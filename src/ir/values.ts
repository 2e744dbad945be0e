/** What a program runs on and what a step returns, by arg name: the oracle's, the devices' and the engine's. */
import type { Tensor } from './tensor.js';

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

/** The values one step runs on, by arg name and role. */
export interface TensorMaps {
  readonly weights: TensorMap;
  readonly state: TensorMap;
  readonly activations: TensorMap;
}
