// comlink ships its node adapter as an .mjs file without a .d.mts beside it, so NodeNext finds no types.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';

  /** A Node-style emitter: a worker_threads Worker or MessagePort, an Electron utility process. */
  export interface NodeEndpoint {
    postMessage(message: unknown, transfer?: readonly unknown[]): void;
    on(type: string, listener: (data: unknown) => void): void;
    off(type: string, listener: (data: unknown) => void): void;
    start?: () => void;
  }

  /** Adapts a Node-style emitter to the addEventListener endpoint comlink speaks over. */
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
