/** The simulated XDNA2: the device, the core's arithmetic, and contract verification (re-exports only). */
export { Xdna2SimDevice, XDNA2_CONTEXTS } from './simDevice.js';
export type { Xdna2SimOptions } from './simDevice.js';
export { CORE_MATH, XDNA2_PRIMS, coreAdd, coreSub, coreMul, coreDiv, makeCoreMath } from './coreMath.js';
export type { CoreMath, CorePrims } from './coreMath.js';
export { EXP_CLAMP, TANH_SATURATE, ERF_SATURATE, SQRT_MAGIC, SQRT_NEWTON_STEPS } from './coreFunctions.js';
export { runContracts, CONTRACT_OPS, RMSNORM_BODY } from './contracts.js';
export type { ContractReport, ContractRunOptions } from './contracts.js';
