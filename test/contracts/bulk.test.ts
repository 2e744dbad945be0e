/** The contract bulk: bounded, drawn in rounds (each element judged once, the edges once), and worker counts bounded. */
import { expect } from 'chai';
import { contractsCommand } from '../../src/cli/contracts.js';
import { checkWorkers, maxWorkers } from '../../src/cli/limits.js';
import { EDGE_VALUES } from '../../src/devices/xdna2/contractCases.js';
import { BULK_ROUND, MAX_BULK, bulkRounds, checkBulk } from '../../src/contracts/bulk.js';
import { runNpu4Contracts } from '../../src/contracts/npu4.js';
import { runXdna2Contracts } from '../../src/contracts/xdna2.js';
import { UsageError } from '../../src/errors/index.js';

const silent = { out: () => undefined, err: () => undefined };

describe('contracts: the bulk and the workers', function () {
  this.timeout(60_000);

  it('splits a bulk past one round into rounds that add up to it', () => {
    expect(bulkRounds(100_000)).to.deep.equal([100_000]);
    expect(bulkRounds(0)).to.deep.equal([0]);
    expect(bulkRounds(2 * BULK_ROUND + 5)).to.deep.equal([BULK_ROUND, BULK_ROUND, 5]);
    expect(bulkRounds(MAX_BULK).reduce((a, b) => a + b, 0)).to.equal(MAX_BULK);
  });

  it('refuses a bulk past the bound, or not a whole number, as a usage error before any work', async () => {
    expect(() => checkBulk(MAX_BULK + 1)).to.throw(UsageError, /--bulk 16777217 is past the bound of 16777216/);
    expect(() => checkBulk(-1)).to.throw(UsageError);
    expect(() => checkBulk(MAX_BULK)).to.not.throw();
    for (const target of ['xdna2', 'npu4']) {
      let caught: unknown;
      await contractsCommand({ target, bulk: 1e9 }, silent).catch((e: unknown) => { caught = e; });
      expect(caught, target).to.be.instanceOf(UsageError);
    }
    let direct: unknown;
    await runXdna2Contracts({ target: 'xdna2', op: 'neg', bulk: 1e9 }).catch((e: unknown) => { direct = e; });
    expect(direct).to.be.instanceOf(UsageError);
  });

  it('judges every element of a bulk drawn in rounds once, and the edge cases once', async () => {
    const bulk = BULK_ROUND + 1000;
    const [r] = await runXdna2Contracts({ target: 'xdna2', op: 'neg', bulk });
    expect(r!.elements).to.equal(EDGE_VALUES.length + bulk);
    expect(r!.pass).to.equal(true);
    const [n] = await runNpu4Contracts({ target: 'npu4', op: 'neg', bulk: BULK_ROUND + 1 });
    const names = n!.caseReports.map((c) => c.name);
    expect(new Set(names).size).to.equal(names.length);
    // 64 bulk cases of 64 x 64 in the first round, one more in the second.
    expect(names.filter((c) => c.startsWith('bulk'))).to.have.length(65);
    expect(n!.pass).to.equal(true);
  });

  it('bounds worker counts at four per core (at least 8), as a usage error', async () => {
    expect(maxWorkers()).to.be.at.least(8);
    expect(checkWorkers(undefined, 2)).to.equal(2);
    expect(checkWorkers(maxWorkers(), 2)).to.equal(maxWorkers());
    expect(() => checkWorkers(maxWorkers() + 1, 2)).to.throw(UsageError, /--workers \d+ is past the bound of \d+/);
    expect(() => checkWorkers(0, 2)).to.throw(UsageError, /at least 1/);
    let caught: unknown;
    await contractsCommand({ target: 'npu4', workers: 400 }, silent).catch((e: unknown) => { caught = e; });
    expect(caught).to.be.instanceOf(UsageError);
  });
});
