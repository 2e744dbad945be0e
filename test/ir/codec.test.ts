import { expect } from 'chai';
import { parseProgram, parseProgramText, programToJson } from '../../src/ir/codec.js';
import { escapeToken, ptr } from '../../src/ir/pointer.js';
import { checkProgram } from '../../src/ops/validate.js';
import { everyAttr, rmsNorm, rmsStep } from './examples.js';
import { refusal } from './helpers.js';

describe('ir/codec', () => {
  describe('parseProgram and programToJson', () => {
    for (const [name, make] of [['rms-step', rmsStep], ['rms-norm', rmsNorm], ['every-attr', everyAttr]] as const) {
      it(`round-trips the ${name} example unchanged, before and after validation`, () => {
        const json = make();
        const p = parseProgram(json);
        expect(programToJson(p)).to.deep.equal(json);
        expect(programToJson(checkProgram(p).program)).to.deep.equal(json);
        expect(JSON.parse(JSON.stringify(programToJson(p)))).to.deep.equal(json);
      });
    }

    it('puts every key but op/in/out into attrs and decodes literal strings to numbers', () => {
      const p = parseProgram(everyAttr());
      expect(p.eqns[4]!.attrs).to.deep.equal({ dtype: 'f16' });
      expect(p.eqns[9]!.attrs).to.deep.equal({ start: [0, 0], limit: [2, 4], stride: [1, 2] });
      expect(p.eqns[1]!.in[1]).to.deep.equal({ lit: -Infinity });
      expect(p.eqns[2]!.in[1]).to.deep.equal({ lit: Infinity, dtype: 'f32' });
      const negZero = p.eqns[3]!.in[1];
      expect(typeof negZero === 'object' && Object.is(negZero.lit, -0)).to.equal(true);
      expect(p.eqns[14]!.out).to.deep.equal(['mx', 'sm']);
    });

    it('decodes row_kernel body literals on validation and writes NaN back as "nan"', () => {
      const checked = checkProgram(parseProgram(everyAttr()));
      const body = checked.eqns[14]!.eqn.attrs['body'];
      expect(body).to.have.nested.property('steps[3].in[1].lit').that.is.NaN;
      const json = programToJson(checked.program);
      expect(json).to.have.nested.property('eqns[14].body.steps[3].in[1].lit', 'nan');
    });

    it('leaves out "state" as an empty map when the program has no state args', () => {
      const json = rmsNorm();
      delete json['state'];
      expect(parseProgram(json).state).to.deep.equal({});
    });

    it('refuses structural faults at the exact place', () => {
      const cases: [string, (j: Record<string, unknown>) => unknown, string][] = [
        ['/format', (j) => { j['format'] = 'program@2'; }, 'program@1'],
        ['/name', (j) => { j['name'] = 3; }, 'string'],
        ['/args/0/dtype', (j) => { (j['args'] as Record<string, unknown>[])[0]!['dtype'] = 'f64'; }, 'f64'],
        ['/args/1/shape/0', (j) => { (j['args'] as Record<string, unknown>[])[1]!['shape'] = [-1]; }, 'non-negative'],
        ['/args/2/role', (j) => { (j['args'] as Record<string, unknown>[])[2]!['role'] = 'input'; }, 'weight'],
        ['/eqns/2/in/1/lit', (j) => { (j['eqns'] as Record<string, unknown>[])[2]!['in'] = ['e', { lit: 'NaN' }]; }, 'nan'],
        ['/eqns/2/in/1/dtype', (j) => { (j['eqns'] as Record<string, unknown>[])[2]!['in'] = ['e', { lit: 1, dtype: 'f8' }]; }, 'dtype'],
        ['/eqns/1/out', (j) => { (j['eqns'] as Record<string, unknown>[])[1]!['out'] = []; }, 'non-empty'],
        ['/eqns/0/in/0', (j) => { (j['eqns'] as Record<string, unknown>[])[0]!['in'] = [7, 'x']; }, 'operand'],
        ['/results/0', (j) => { j['results'] = [{ lit: 1 }]; }, 'non-empty string'],
        ['/state/acc', (j) => { j['state'] = { acc: 1 }; }, 'non-empty string'],
        ['/result', (j) => { j['result'] = []; }, 'no key "result"'],
      ];
      for (const [path, edit, words] of cases) {
        const json = rmsStep();
        edit(json);
        expect(refusal(() => parseProgram(json), 'InvalidProgram', path)).to.contain(words);
      }
      refusal(() => parseProgram([]), 'InvalidProgram', '');
    });
  });

  describe('parseProgramText', () => {
    it('parses program text', () => {
      expect(parseProgramText(JSON.stringify(rmsStep(), null, 2)).name).to.equal('rms-step');
    });

    it('turns a JSON syntax error into InvalidProgram at the root naming line and column', () => {
      const text = '{\n  "format": "program@1",\n  "name": "x",\n  "args": [1, 2,]\n}';
      const reason = refusal(() => parseProgramText(text), 'InvalidProgram', '');
      expect(reason).to.contain('line 4, column 17');
    });

    it('names the end of the text when it stops early', () => {
      expect(refusal(() => parseProgramText('{"format": "program@1"'), 'InvalidProgram', '')).to.match(/line 1, column 23: the text ends early/);
    });

    it('reports structural faults of parsed text with their pointers', () => {
      refusal(() => parseProgramText('{"format": "program@1"}'), 'InvalidProgram', '/name');
    });
  });

  describe('JSON pointers', () => {
    it('escapes ~ before / so names containing both stay unambiguous', () => {
      expect(escapeToken('a/b~c')).to.equal('a~1b~0c');
      expect(escapeToken('~1')).to.equal('~01');
      expect(ptr('/state', 'k/v', 3)).to.equal('/state/k~1v/3');
    });
  });
});
