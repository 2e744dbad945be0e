/**
 * The random bulk of contract verification: how many elements an op may be asked for, and the rounds it
 * is drawn and judged in. A round's cases, device results and references are dropped before the next
 * round is drawn, so memory stays that of one round however large the bulk; the bound keeps a run's time
 * within reason (docs/LIMITS.md).
 */
import { UsageError } from '../errors/index.js';

/** The largest bulk per op: 2^24 elements (minutes per op on the simulated devices). */
export const MAX_BULK = 2 ** 24;

/** Elements drawn and judged at once. */
export const BULK_ROUND = 2 ** 18;

/** Refuses a bulk that is not a whole number in [0, MAX_BULK], naming `--bulk`. */
export function checkBulk(bulk: number | undefined): void {
  if (bulk === undefined) return;
  if (!Number.isSafeInteger(bulk) || bulk < 0) throw new UsageError(`--bulk must be a whole number, got ${String(bulk)}`);
  if (bulk > MAX_BULK) throw new UsageError(`--bulk ${bulk} is past the bound of ${MAX_BULK} random elements per op`);
}

/** The sizes of the rounds a bulk is drawn in: [bulk] up to one round, then rounds of BULK_ROUND. */
export function bulkRounds(bulk: number, round = BULK_ROUND): number[] {
  if (bulk <= round) return [bulk];
  const out: number[] = [];
  for (let left = bulk; left > 0; left -= round) out.push(Math.min(round, left));
  return out;
}
