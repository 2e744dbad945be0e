/** Assertions shared by the ir tests. */
import { inspect } from 'node:util';
import { expect } from 'chai';
import { EngineError } from '../../src/errors/index.js';

/** Runs `f`, expects it to throw an EngineError with `code` and pointer `path`; returns its reason. */
export function refusal(f: () => unknown, code: string, path: string): string {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  if (!(caught instanceof EngineError)) throw new Error(`expected ${code} at ${path}, got ${caught === undefined ? 'no error' : inspect(caught)}`);
  const wire = caught.toWire();
  expect({ code: wire.code, path: wire['path'] }, wire.message).to.deep.equal({ code, path });
  expect(wire['reason']).to.be.a('string').and.not.equal('');
  return String(wire['reason']);
}
