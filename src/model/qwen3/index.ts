/** Qwen3 models: programs, decoding, loadModel, the gate, and the tiny generator. Re-exports only. */
export {
  tinyQwen3Gguf, tinyQwen3Tensors, tinyQwen3Metadata, tinyQwen3Config, writeTinyQwen3, QWEN3_0_6B_SHAPE,
  type TinyQwen3Options, type TinyQwen3Config, type TinyTensor,
} from './tiny.js';
export { configFromGguf, configFromJson, QWEN3_SHAPES, type Qwen3Config } from './config.js';
export type { ModelConfig } from '../arch/config.js';
export { ggufWeights, q4nxWeights, expectedShapes, type BoundWeight, type ModelWeights } from './weights.js';
export { buildProgram, cacheShapes, CACHE_TYPES, type CacheType, type ProgramShape } from './program.js';
export { Sampler, argmax, penalize, resolveSampling, DEFAULT_SAMPLING, type SamplingOptions } from './sampler.js';
export { EngineRunner, ReferenceRunner, weightInputs, type StepRunner, type StepInput, type StepResult } from './runner.js';
export type { DecodeRequest, FinishReason, GeneratedToken, GenerationResult } from './generate.js';
export { loadModel, Qwen3Model, checkModelTarget, type GenerateRequest, type LoadModelOptions } from './model.js';
export { PromptShare } from './share.js';
export type { KvHold, KvUse } from './kv.js';
export { openModelSource, type ModelSource } from './source.js';
export { runGate, type GateOptions, type GatePhase, type GateReport } from './gate.js';
export { scoreIds, scoreText, logProbability, type ScoreResult, type TextScoreResult } from './score.js';
