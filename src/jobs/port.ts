/**
 * The endpoints an embedded engine is reached through, as one comlink Endpoint that can let go of every
 * listener it added (so a closed connection keeps no thread alive), and the events that say the other
 * side is gone: a Worker's or utility process's 'exit', a MessagePort's 'close', and a Worker's 'error'
 * (its module threw at import, or it threw uncaught), which unheard would crash this process.
 */
import type { Endpoint } from 'comlink';
import { messageOf } from '../errors/index.js';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';

// `any`: each kind of port hands its listeners something else (data, a MessageEvent, an exit code).
type Listener = (...args: any[]) => void;

/** A Node-style emitter: a worker_threads Worker, MessagePort or parentPort; an Electron utility process or MessagePortMain. */
export interface EmitterPort {
  postMessage(message: unknown, transfer?: readonly any[]): void;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
  /** Electron's MessagePortMain delivers nothing until started. */
  start?(): void;
}

/** A DOM-style port: a web MessagePort, as an Electron renderer holds it. */
export interface DomPort {
  postMessage(message: unknown, transfer?: any[]): void;
  addEventListener(event: string, listener: Listener): void;
  removeEventListener(event: string, listener: Listener): void;
  start?(): void;
}

/** Anything an engine can be exposed on or connected through. */
export type EnginePort = EmitterPort | DomPort;

/** A comlink endpoint over a port, and the way to detach from the port again. */
export interface Attached {
  readonly endpoint: Endpoint;
  /** For error messages: which worker, process or port this is. */
  readonly name: string;
  /** Calls `gone` (once) with why, when the other side fails, exits or the port closes. */
  onGone(gone: (why: string) => void): void;
  /** Removes every listener this side added to the port. */
  detach(): void;
}

/** True for a value that can serve as an EnginePort. */
export function isEnginePort(p: unknown): p is EnginePort {
  if (typeof p !== 'object' || p === null) return false;
  const has = (k: string) => typeof (p as Record<string, unknown>)[k] === 'function';
  return has('postMessage') && ((has('on') && has('off')) || (has('addEventListener') && has('removeEventListener')));
}

function isEmitter(p: EnginePort): p is EmitterPort {
  return typeof (p as Partial<EmitterPort>).on === 'function' && typeof (p as Partial<EmitterPort>).off === 'function';
}

/**
 * Electron's MessagePortMain and a utility process's parentPort hand 'message' listeners an event
 * (`{ data, ports }`) where Node hands the data itself. comlink's own messages never carry `ports`,
 * so an object that does is such an event.
 */
function unwrapEvent(m: unknown): unknown {
  if (typeof m === 'object' && m !== null && 'data' in m && Array.isArray((m as { ports?: unknown }).ports)) return m.data;
  return m;
}

function nameOf(p: EnginePort): string {
  const { threadId, pid, terminate, kill } = p as { threadId?: unknown; pid?: unknown; terminate?: unknown; kill?: unknown };
  if (typeof threadId === 'number' && typeof terminate === 'function') return `worker thread ${threadId}`;
  // An Electron utility process has no pid until it has spawned.
  if (typeof pid === 'number') return `process ${pid}`;
  if (typeof kill === 'function') return 'a child process';
  return 'a MessagePort';
}

/** Attaches comlink to a port: through comlink's node adapter for an emitter, directly for a DOM port. */
export function attach(port: EnginePort): Attached {
  const name = nameOf(port);
  const undo: (() => void)[] = [];
  const listen = (event: string, l: Listener) => {
    if (isEmitter(port)) { port.on(event, l); undo.push(() => port.off(event, l)); }
    else { port.addEventListener(event, l); undo.push(() => port.removeEventListener(event, l)); }
  };
  let inner: Endpoint;
  if (isEmitter(port)) {
    const unwrapping = new Map<(data: unknown) => void, Listener>();
    inner = nodeEndpoint({
      postMessage: (m, t) => port.postMessage(m, t),
      on: (event, l) => { const u = (m: unknown) => l(unwrapEvent(m)); unwrapping.set(l, u); port.on(event, u); },
      off: (event, l) => { const u = unwrapping.get(l); if (u) { unwrapping.delete(l); port.off(event, u); } },
      ...(typeof port.start === 'function' ? { start: () => port.start?.() } : {}),
    });
  } else {
    inner = port;
  }
  const messageListeners = new Set<Parameters<Endpoint['addEventListener']>[1]>();
  const endpoint: Endpoint = {
    postMessage: (m, t) => inner.postMessage(m, t),
    addEventListener: (event, l) => { messageListeners.add(l); inner.addEventListener(event, l); },
    removeEventListener: (event, l) => { messageListeners.delete(l); inner.removeEventListener(event, l); },
    ...(inner.start ? { start: () => inner.start?.() } : {}),
  };
  return {
    endpoint,
    name,
    onGone(gone) {
      let fired = false;
      const once = (why: string) => { if (!fired) { fired = true; gone(why); } };
      listen('error', (e: unknown) => once(`it failed: ${messageOf(e)}`));
      listen('exit', (code: number) => once(`it exited with code ${code}`));
      listen('close', () => once('its port closed'));
    },
    detach() {
      for (const l of messageListeners) inner.removeEventListener('message', l);
      messageListeners.clear();
      for (const u of undo.splice(0)) u();
    },
  };
}
