/** What a program runs on and what a step returns, by arg name: the oracle's, the devices' and the engine's. */
import type { FileWeight } from './fileWeight.js';
import type { HeldTensor, Tensor } from './tensor.js';

export type TensorMap = Readonly<Record<string, Tensor>>;

/** Values the oracle holds by name: tensors of elements, and quantized weights as their blocks. */
export type HeldMap = Readonly<Record<string, HeldTensor>>;

/** A weight as the engine is given it: a tensor, a quantized one, or a byte range of a file. */
export type Weight = HeldTensor | FileWeight;
export type WeightMap = Readonly<Record<string, Weight>>;

/** What a program runs on: weights and initial state once, activation contents once per step. */
export interface ProgramInputs {
  /** Weights; one bound from a file is read (or mapped) only where it is uploaded. */
  readonly weights: WeightMap;
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
  readonly weights: HeldMap;
  readonly state: TensorMap;
  readonly activations: TensorMap;
}
