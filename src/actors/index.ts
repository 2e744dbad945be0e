/** The actor runtime: supervised actor workers, task pools, and their worker-side entries. */
export { superviseActor, ActorSupervisor, type SuperviseOptions } from './supervisor.js';
export { createPool, type ActorPool, type PoolOptions, type PoolEvents, type PoolState, type RunOptions } from './pool.js';
export { serveActor, type ActorContext } from './serve.js';
export { servePoolTask } from './poolTask.js';
export { transfer } from './transfer.js';
export type { RestartIntensity } from './intensity.js';
export type { ActorState, CallOptions, LifecycleEvents, MethodArgs, MethodName, MethodResult } from './types.js';
export type {
  CallMessage, EventMessage, FailMessage, InitMessage, ParentMessage, PoolReply, PoolTaskMessage, ReadyMessage,
  ReplyMessage, WorkerMessage,
} from './protocol.js';
