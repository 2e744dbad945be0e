/** The simulated XDNA2: the device, the core's arithmetic, and what contract verification checks (re-exports only). */
export { Xdna2SimDevice } from './simDevice.js';
export type { Xdna2SimOptions } from './simDevice.js';
export { CORE_MATH, XDNA2_PRIMS, coreAdd, coreSub, coreMul, coreDiv, makeCoreMath } from './coreMath.js';
export type { CoreMath, CorePrims } from './coreMath.js';
export { EXP_CLAMP, TANH_SATURATE, ERF_SATURATE, SQRT_MAGIC, SQRT_NEWTON_STEPS } from './coreFunctions.js';
export { CONTRACT_OPS, RMSNORM_BODY, contractOf, referenceOf } from './contracts.js';
export type { ContractOp, ContractReport } from './contracts.js';
