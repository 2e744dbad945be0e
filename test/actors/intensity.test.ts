import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { RestartWindow } from '../../src/actors/intensity.js';

describe('actors: the restart intensity window', () => {
  it('at most 1 restart in 50 ms: admitted, refused, and admitted again once the window has passed', async () => {
    const w = new RestartWindow({ max: 1, windowMs: 50 });
    expect(w.admit()).to.equal(true);
    expect(w.count).to.equal(1);
    expect(w.admit()).to.equal(false);
    await sleep(60);
    // The first restart has left the window: the count forgets it and one more is admitted.
    expect(w.count).to.equal(0);
    expect(w.admit()).to.equal(true);
    expect(w.admit()).to.equal(false);
  });

  it('max 0 admits none', () => {
    expect(new RestartWindow({ max: 0, windowMs: 50 }).admit()).to.equal(false);
  });
});
