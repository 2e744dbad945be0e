import { expect } from 'chai';
import { escapeControl, escapeLines, quote } from '../../src/io/escape.js';

describe('escapeControl', () => {
  it('writes C0, DEL, C1 and bidi overrides as escapes and leaves other text alone', () => {
    expect(escapeControl('\u001b[31mred\u0007')).to.equal('\\u001b[31mred\\u0007');
    expect(escapeControl('a\nb\tc\rd')).to.equal('a\\nb\\tc\\rd');
    expect(escapeControl('\u007f\u009b\u202e\u2066')).to.equal('\\u007f\\u009b\\u202e\\u2066');
    expect(escapeControl('naïve → 日本 "q" \\')).to.equal('naïve → 日本 "q" \\');
  });

  it('keeps a JSON document the same document', () => {
    const doc = { name: '\u001b]0;x\u0007\u009b\u007f', n: [1, 'two'] };
    expect(JSON.parse(escapeControl(JSON.stringify(doc)))).to.deep.equal(doc);
  });

  it('is idempotent: its output holds no control character', () => {
    const once = escapeControl('\u0000\u001f\u0085');
    expect(escapeControl(once)).to.equal(once);
  });

  it('escapeLines keeps line breaks, quote quotes like JSON', () => {
    expect(escapeLines('one\u001b\ntwo')).to.equal('one\\u001b\ntwo');
    expect(quote('a"\u001b')).to.equal('"a\\"\\u001b"');
  });
});
