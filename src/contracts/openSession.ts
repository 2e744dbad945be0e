/**
 * The device side of contract verification: a contract program compiled by its target's backend
 * exactly as a user's would be (planned, every unit compiled), loaded on the device and opened as a
 * Session (src/session, in this thread: no device actor, unlike the engine's DeviceSession), which
 * then replays it once per case with the engine's own writes, runs and read-backs.
 */
import type { Backend } from '../compiler/backend.js';
import type { Device } from '../devices/device.js';
import type { CheckedProgram } from '../ir/checked.js';
import type { TensorMap } from '../oracle/types.js';
import { planProgram } from '../planner/plan.js';
import { Session } from '../session/session.js';

/** Generous: one replay of the largest case takes milliseconds; a deadline only guards against a hang. */
export const CONTRACT_DEADLINE_MS = 60_000;

/** Compiles `checked` with `backend`, loads every unit on `device` and opens a session over them. */
export async function openSession(device: Device, backend: Backend, checked: CheckedProgram, weights: TensorMap = {}): Promise<Session> {
  const plan = planProgram(checked, backend.target);
  const units = backend.units(checked, plan);
  if (units.length === 0) throw new Error(`${checked.program.name} compiled to no unit`);
  const stages = [];
  for (const [i, unit] of units.entries()) {
    const loaded = await device.load({ target: backend.target.name, bytes: backend.compile(checked, plan, i) });
    stages.push({ loaded, wiring: unit.wiring });
  }
  const p = checked.program;
  return Session.open(device, stages, {
    weights, state: {}, activations: p.args.filter((a) => a.role === 'activation').map((a) => a.name), stateNext: p.state, results: p.results,
  });
}
