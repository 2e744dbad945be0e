/** npu-offload's public API: re-exports only. */
export { createEngine, Engine, asEngineError } from './jobs/engine.js';
export type { EngineOptions, JobSpec, DeviceConfig, CompileOutcome, SubmitOptions } from './jobs/engine.js';
export type { EngineEvents } from './jobs/engine.js';
export type { SessionSpec, SessionStep, DeviceSession } from './jobs/deviceSession.js';
export type { EngineStatus, DeviceStatus, ActorStatus, FailureRecord } from './jobs/status.js';
export { Job } from './jobs/job.js';
export type { JobEvents, JobResult, JobStage, StepEvent, Verification } from './jobs/job.js';
export { ListenerError } from './jobs/job.js';
export type { VerificationFailure } from './jobs/job.js';
export { DEFAULT_KEPT_STEPS } from './jobs/options.js';
export type { ProgramSource } from './jobs/inputs.js';
export type { ChaosOptions, FaultPlan } from './actors/deviceActor.js';
export { exposeEngine, connectEngine } from './jobs/embed.js';
export type { RemoteEngine, JobApi, EnginePort, EmitterPort, DomPort } from './jobs/embed.js';

export * from './errors/index.js';

export type { AnyDType, Arg, BodyStep, DType, Eqn, FloatDType, Literal, Operand, Program, QuantDType, Role, RowBody, Shape } from './ir/types.js';
export { DTYPES, QUANT_DTYPES, isQuantized, numel, storageBytes } from './ir/types.js';
export { QUANT_BLOCKS } from './numerics/quant.js';
export type { BlockLayout } from './numerics/quant.js';
export { dequantize, dequantRow } from './numerics/dequant.js';
export type { FileWeight } from './ir/fileWeight.js';
export type { CheckedEqn, CheckedProgram } from './ir/checked.js';
export { isQuantTensor, quantTensor, tensor, zeros } from './ir/tensor.js';
export type { HeldTensor, QuantTensor, Tensor } from './ir/tensor.js';
export { program, lit, ProgramBuilder } from './ops/builder.js';
export type { Value, ValueOperand } from './ops/builder.js';
export { parseProgram, parseProgramText, programToJson } from './ir/codec.js';
export { checkProgram } from './ops/validate.js';
export { DEFAULT_LIMITS, resolveLimits } from './ir/limits.js';
export type { Limits } from './ir/limits.js';
export { decodeTensor, decodeWeight, encodeHeld, encodeQuantTensor, encodeTensor } from './ir/tensorCodec.js';
export type { WireTensor, WireB64Tensor, WireDataTensor } from './ir/tensorCodec.js';
export { decodeInputs } from './ir/inputsCodec.js';
export { DEFAULT_MAX_STEPS } from './ir/inputsCodec.js';
export { tensorFromBytes, tensorToBytes } from './ir/bytes.js';

export { OP_NAMES } from './ops/rule.js';
export type { AnyType, OpName, QuantType, ValueType } from './ops/rule.js';

export { runProgram, runStep } from './oracle/index.js';
export type { OracleOptions, ProgramInputs, StepOutput, TensorMap, Weight, WeightMap } from './oracle/index.js';

export { roundF16, roundBF16, roundToDtype, f16ToBits, f16FromBits, bf16ToBits, bf16FromBits, F16_MAX, BF16_MAX } from './numerics/float16.js';
export { erf, erfc } from './numerics/erf.js';
export { ulpDistance, ulpOf } from './numerics/ulp.js';
export { measure, maxAbsError, maxRelError, normwiseRelError, cosineSimilarity, maxUlpError } from './numerics/measures.js';
export type { Measures } from './numerics/measures.js';
export { compareTensor } from './numerics/compare.js';
export type { Comparison, Tolerance } from './numerics/compare.js';
export { NUMERICS_CLASSES, toleranceFor } from './numerics/classes.js';
export type { NumericsClass } from './numerics/classes.js';

export { TARGET_NAMES } from './targets/target.js';
export type { TargetName, NumericsPolicy } from './targets/target.js';
export { programNumerics } from './targets/numerics.js';
export type { ProgramNumerics } from './targets/numerics.js';

export { BlobCache, defaultCacheDir, identityKey } from './cache/index.js';
export type { BlobIdentity } from './cache/index.js';
export { openDevice } from './devices/registry.js';
export type { Device, DeviceKind } from './devices/device.js';
export type { FaultOptions } from './devices/faults.js';

export { resolveTarget, CPU_TARGET, XDNA2_TARGET, NPU4_TARGET, HOST_TARGET } from './targets/index.js';
export type { Admission, Refusal, Target } from './targets/target.js';
export { planProgram, refusalsOf } from './planner/plan.js';
export type { Plan } from './planner/plan.js';
export { featureMatrix } from './planner/matrix.js';

/** The model tools and sealed kernel sets, each under its own name. */
export * as gguf from './model/gguf/index.js';
export * as q4nx from './model/q4nx/index.js';
export * as pack from './model/pack/index.js';
export * as seal from './seal/index.js';

/** Tokenizers (a tokenizer.json, a model directory, a GGUF's own) and chat templates. */
export { loadTokenizer, tokenizerFromGguf, tokenizerFromHf } from './model/tokenizer/index.js';
export type { ChatMessage, ChatOptions, DecodeOptions, EncodeOptions, Tokenizer, TokenizerKind } from './model/tokenizer/index.js';
export * as tokenizer from './model/tokenizer/index.js';
/** The distributed farm (BullMQ on Redis) and the remote cache tier. */
export { runQueueFarm, FARM_QUEUE } from './jobs/farmQueue.js';
export type { FarmJobResult, FarmOutcome, FarmProgress, QueueFarmOptions } from './jobs/farmQueue.js';
export { CompileWorker } from './jobs/compileWorker.js';
export type { CompileWorkerOptions, WorkerCounts, WorkerEvent } from './jobs/compileWorker.js';
export { RemoteTier } from './cache/remoteTier.js';
export type { RemoteStats, RemoteTierOptions, RemoteVerifyResult } from './cache/remoteTier.js';
export type { CacheTierStats } from './actors/cacheActor.js';
/** Qwen3 models run through the engine: loadModel(path).generate(...), and the gate against the fp64 reference. */
export { loadModel, Qwen3Model } from './model/qwen3/model.js';
export type { GenerateRequest, LoadModelOptions } from './model/qwen3/model.js';
export type { GeneratedToken, GenerationResult, FinishReason, GenerateOptions } from './model/qwen3/generate.js';
export type { SamplingOptions } from './model/qwen3/sampler.js';
export type { ScoreResult, TextScoreResult } from './model/qwen3/score.js';
export * as qwen3 from './model/qwen3/index.js';
export { runPartitioned } from './jobs/partitioned.js';
export type { PartitionedResult, PartitionedSpec, RecordedTransfer } from './jobs/partitioned.js';
