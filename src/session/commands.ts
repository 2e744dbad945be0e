/**
 * What a recording is made of: where each value lives (its placement), the commands of one step, and
 * the checks a narrowing device needs; shared by the recorder that builds a step and the session that
 * replays it.
 */
import { InvalidInput } from '../errors/index.js';
import type { AnyDType, Shape } from '../ir/types.js';
import type { Binding, Device, LoadedArtifact } from '../devices/device.js';
import { isArenaSlot } from '../devices/device.js';

/** Where one program value lives on the device: a buffer of its own, or an offset in an arena. */
export interface Placement {
  readonly value: string;
  /** Quantized only for a weight's home: its blocks. */
  readonly dtype: AnyDType;
  readonly shape: Shape;
  readonly bytes: number;
  readonly at: Binding;
}

/** One recorded command of a step. */
export type Command =
  | { readonly kind: 'write'; readonly to: Placement }
  | { readonly kind: 'run'; readonly loaded: LoadedArtifact; readonly bindings: Readonly<Record<string, Binding>> }
  | { readonly kind: 'copy'; readonly from: Placement; readonly to: Placement }
  | { readonly kind: 'read'; readonly from: Placement; readonly as: 'result' | 'state'; readonly name: string };

/** The range checks of a narrowing device (see session.ts's doc): what is checked where. */
export interface RangeChecks {
  readonly max: number;
  /** F32 state homes by arg: checked before a replay unless the last replay's result checks covered them. */
  readonly state: readonly { readonly arg: string; readonly home: Placement }[];
  /** Per run command: the F32 values it writes, checked as results right after it. */
  readonly outputs: ReadonlyMap<Command, readonly Placement[]>;
}

/** The index and value of the first element of an F32 tensor beyond `max` or NaN, as the device sees it. */
export function firstOutOfRange(data: Float64Array, max: number): { index: number; value: number } | undefined {
  for (let i = 0; i < data.length; i++) {
    // The device holds the f32 value, so a host f64 that rounds into range is in range.
    const v = Math.fround(data[i]!);
    if (Number.isNaN(v) || Math.abs(v) > max) return { index: i, value: v };
  }
  return undefined;
}

export function writeTo(device: Device, b: Binding, bytes: Uint8Array): void {
  if (isArenaSlot(b)) device.write(b.arena, b.offset, bytes);
  else device.write(b, 0, bytes);
}

/** Zeroes a whole buffer (the device's zero() when it has one) or an arena slot of `length` bytes. */
export function zeroAt(device: Device, b: Binding, length: number): void {
  if (!isArenaSlot(b) && device.zero !== undefined) device.zero(b);
  else writeTo(device, b, new Uint8Array(length));
}

export function readFrom(device: Device, b: Binding, length: number): Uint8Array {
  return isArenaSlot(b) ? device.read(b.arena, b.offset, length) : device.read(b, 0, length);
}

/** `length` bytes of a binding from `offset` bytes into it. */
export function readAt(device: Device, b: Binding, offset: number, length: number): Uint8Array {
  return isArenaSlot(b) ? device.read(b.arena, b.offset + offset, length) : device.read(b, offset, length);
}

/** Writes `bytes` into a binding at `offset` bytes into it. */
export function writeAt(device: Device, b: Binding, offset: number, bytes: Uint8Array): void {
  if (isArenaSlot(b)) device.write(b.arena, b.offset + offset, bytes);
  else device.write(b, offset, bytes);
}

/** The caller's tensor (or weight) for a value, or InvalidInput at `path` when it is missing or mistyped. */
export function checkTensor<T extends { readonly dtype: AnyDType; readonly shape: Shape }>(
  path: string, p: { readonly value: string; readonly dtype: AnyDType; readonly shape: Shape }, t: T | undefined,
): T {
  if (!t) throw new InvalidInput(path, `no tensor supplied for ${p.value}`);
  if (t.dtype !== p.dtype || t.shape.length !== p.shape.length || t.shape.some((d, i) => d !== p.shape[i])) {
    throw new InvalidInput(path, `${p.value} must be ${p.dtype}[${p.shape.join(', ')}], got ${t.dtype}[${t.shape.join(', ')}]`);
  }
  return t;
}
