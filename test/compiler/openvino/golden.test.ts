/**
 * The golden IR: the bytes the writer produces for the representative program are committed under
 * test/fixtures/openvino/. A change to the writer's output fails this test; when the change is meant,
 * rewrite the files with UPDATE_GOLDEN=1 (e.g. `UPDATE_GOLDEN=1 npx mocha ... golden.test.js`), bump
 * NPU4_COMPILER.version (the bytes are part of every cache identity) and commit them.
 */
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import { irOf } from '../../../src/compiler/openvino/backend.js';
import { readIr } from '../../../src/compiler/openvino/irReader.js';
import { irParameters, irResults } from '../../../src/compiler/openvino/irModel.js';
import { representative } from './programs.js';

// Compiled to dist-*/test/compiler/openvino/, four levels below the repository root.
const XML = new URL('../../../../test/fixtures/openvino/representative.xml', import.meta.url);
const BIN = new URL('../../../../test/fixtures/openvino/representative.bin', import.meta.url);

describe('compiler/openvino golden IR', () => {
  const ir = irOf(representative());
  if (process.env['UPDATE_GOLDEN'] === '1') {
    writeFileSync(XML, ir.xml);
    writeFileSync(BIN, ir.bin);
  }

  it('writes the representative program byte for byte as committed', () => {
    expect(ir.xml, 'the .xml changed; if meant, rerun with UPDATE_GOLDEN=1').to.equal(readFileSync(XML, 'utf8'));
    expect(Buffer.from(ir.bin).equals(readFileSync(BIN)), 'the .bin changed; if meant, rerun with UPDATE_GOLDEN=1').to.equal(true);
  });

  it('reads the committed files back to the model the writer builds', () => {
    const m = readIr(readFileSync(XML, 'utf8'), new Uint8Array(readFileSync(BIN)));
    expect(m).to.deep.equal(readIr(ir.xml, ir.bin));
    expect(irParameters(m).map((l) => l.name)).to.deep.equal(['x', 'w', 'idx', 'pos', 'acc']);
    expect(irResults(m).map((l) => l.name)).to.deep.equal(['result:t', 'result:g', 'state:acc']);
    const types = new Set(m.layers.map((l) => `${l.type}-${l.version}`));
    for (const t of ['Convert-opset1', 'Multiply-opset1', 'MatMul-opset1', 'ReduceSum-opset1', 'Add-opset1', 'Gather-opset8', 'Slice-opset8', 'ScatterNDUpdate-opset3']) {
      expect(types, t).to.include(t);
    }
  });
});
