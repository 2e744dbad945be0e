import { expect } from 'chai';
import { RestartWindow } from '../../src/actors/intensity.js';

describe('actors: the restart intensity window', () => {
  it('at most 1 restart in 50 ms: admitted, refused, and admitted again once the window has passed', () => {
    // An injected clock: on a loaded machine 50 real ms can pass between two lines, which would admit
    // the second restart early; here time moves only when the test moves it.
    let t = 1000;
    const w = new RestartWindow({ max: 1, windowMs: 50 }, () => t);
    expect(w.admit()).to.equal(true);
    expect(w.count).to.equal(1);
    t += 49;
    expect(w.admit(), 'still inside the window').to.equal(false);
    expect(w.count).to.equal(1);
    t += 1;
    // The first restart has left the window: the count forgets it and one more is admitted.
    expect(w.count).to.equal(0);
    expect(w.admit()).to.equal(true);
    expect(w.admit()).to.equal(false);
  });

  it('max 0 admits none', () => {
    expect(new RestartWindow({ max: 0, windowMs: 50 }).admit()).to.equal(false);
  });

  it('reads performance.now by default, a monotonic clock', () => {
    const w = new RestartWindow({ max: 2, windowMs: 60_000 });
    expect(w.admit()).to.equal(true);
    expect(w.count).to.equal(1);
    const clock = w.now();
    expect(clock).to.be.within(0, performance.now());
  });
});
