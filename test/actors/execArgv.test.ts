import { expect } from 'chai';
import { workerExecArgv } from '../../src/actors/execArgv.js';

describe('actors: the flags workers start with', () => {
  it('inherit the process flags, except in a process whose main script came from -e, -p or --input-type', () => {
    expect(workerExecArgv(['--enable-source-maps', '--max-old-space-size=512'])).to.equal(undefined);
    expect(workerExecArgv([])).to.equal(undefined);
    expect(workerExecArgv(['--max-old-space-size=512', '--input-type=module', '-e', 'code'])).to.deep.equal([]);
    expect(workerExecArgv(['-p', '1 + 1'])).to.deep.equal([]);
    expect(workerExecArgv(['--eval=code'])).to.deep.equal([]);
  });
});
