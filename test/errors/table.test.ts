import { expect } from 'chai';
import * as errors from '../../src/errors/index.js';
import { ERROR_CLASSES, EngineError, fromWire, messageOf, type ErrorCode } from '../../src/errors/index.js';

// One instance of every class, with fields that differ from each other, so a constructor whose
// parameter order disagrees with its WireSpec rebuilds with swapped fields and fails below.
const SAMPLES = {
  InvalidProgram: new errors.InvalidProgram('/eqns/1/op', 'unknown op'),
  InvalidInput: new errors.InvalidInput('/x/b64', 'short'),
  InvalidOptions: new errors.InvalidOptions('deadlineMs', 'a positive number, not -1'),
  ResourceLimit: new errors.ResourceLimit('elements-per-tensor', 1e12, 2 ** 31, '/args/0'),
  KvCacheFull: new errors.KvCacheFull(9, 3, 16, 64),
  IndexOutOfRange: new errors.IndexOutOfRange(3, -1, 8),
  IntegerDivideByZero: new errors.IntegerDivideByZero(4),
  CapabilityMissing: new errors.CapabilityMissing(2, 'matmul', 'xdna2.matmul'),
  MissingBound: new errors.MissingBound(1, 5, 'sqrt of a sum'),
  RegionLimit: new errors.RegionLimit(7, 'tiles', 33, 32),
  ContextLimit: new errors.ContextLimit(17, 16),
  MissingContract: new errors.MissingContract(0, 'add'),
  NarrowingRange: new errors.NarrowingRange(2, 65510),
  IntegerToFloat: new errors.IntegerToFloat(6),
  NarrowingRangeUpload: new errors.NarrowingRangeUpload('w', 9, Infinity),
  NarrowingRangeInput: new errors.NarrowingRangeInput('x', 3, NaN),
  NarrowingRangeResult: new errors.NarrowingRangeResult('y', 1, -Infinity),
  DispatchRefused: new errors.DispatchRefused('shape-abi', 'extent 3 is not 4'),
  ArgumentMismatch: new errors.ArgumentMismatch('x', 'precision'),
  VendorCompilerError: new errors.VendorCompilerError('layer 3: unsupported'),
  DeadlineExceeded: new errors.DeadlineExceeded(250),
  DevicePoisoned: new errors.DevicePoisoned('2026-12-01T00:00:00.000Z'),
  NoDevice: new errors.NoDevice('xdna2', 'no driver'),
  LoadFailed: new errors.LoadFailed('npu4', 'bad blob'),
  ActorDown: new errors.ActorDown('cache', 5, 60_000),
  ActorCrashed: new errors.ActorCrashed('device:cpu', 'exit 1'),
  EngineClosed: new errors.EngineClosed(),
  Aborted: new errors.Aborted('the client went away'),
  UsageError: new errors.UsageError('--steps is a positive integer'),
  CacheError: new errors.CacheError('/tmp/c', 'EACCES'),
  CacheUnavailable: new errors.CacheUnavailable('/tmp/c/v1/index.sqlite', 'file is not a database'),
  Q4nxError: new errors.Q4nxError(null, 'bad magic'),
  GgufError: new errors.GgufError(24, 'tensor count past the bound'),
  SealError: new errors.SealError('kernels/a.bin', 'digest-mismatch'),
  TokenizerError: new errors.TokenizerError('model/tokenizer.json', 'no "model" object'),
  RemoteUnavailable: new errors.RemoteUnavailable('redis://127.0.0.1:1/0', 'connect ECONNREFUSED'),
  WriteFailed: new errors.WriteFailed('/tmp/r.html', 'no space left on the device (ENOSPC)'),
  FarmTimeout: new errors.FarmTimeout('redis://127.0.0.1:6379/0', 60_000, 0, 3),
  AddonError: new errors.AddonError('./my-addon.js', 'command', 'the command echo-info returned "0", not an exit code'),
} satisfies Record<ErrorCode, EngineError>;

describe('errors: one table from code to class', () => {
  for (const [code, e] of Object.entries(SAMPLES)) {
    it(`${code} crosses the wire as itself, with its fields and message`, () => {
      const wire = JSON.parse(JSON.stringify(e.toWire())) as errors.WireError;
      expect(wire.code).to.equal(code);
      const back = fromWire(wire)!;
      expect(back).to.be.instanceOf(ERROR_CLASSES[code as ErrorCode]);
      expect(back.code).to.equal(code);
      expect(back.message).to.equal(e.message);
      expect(back.toWire()).to.deep.equal(wire);
    });
  }

  it('numbers JSON cannot write cross as strings and come back as numbers', () => {
    const back = fromWire(JSON.parse(JSON.stringify(SAMPLES.NarrowingRangeInput.toWire())) as errors.WireError)! as errors.NarrowingRangeInput;
    expect(back.value).to.be.NaN;
    expect(SAMPLES.NarrowingRangeUpload.toWire()['value']).to.equal('inf');
  });

  it('an unknown code is not rebuilt', () => {
    expect(fromWire({ code: 'FromTheFuture' as ErrorCode, message: 'x' })).to.equal(undefined);
  });

  it('messageOf says what any thrown value says', () => {
    expect(messageOf(SAMPLES.ContextLimit)).to.equal(SAMPLES.ContextLimit.message);
    expect(messageOf(new Error('plain'))).to.equal('Error: plain');
    expect(messageOf(new TypeError('bad'))).to.equal('TypeError: bad');
    expect(messageOf(42)).to.equal('42');
    expect(messageOf({ toString() { throw new Error('no'); } })).to.equal('[object Object]');
  });
});
