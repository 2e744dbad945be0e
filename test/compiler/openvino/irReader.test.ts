import { expect } from 'chai';
import { program } from '../../../src/ops/builder.js';
import { checkProgram } from '../../../src/ops/validate.js';
import { narrowToDevicePrecision } from '../../../src/compiler/openvino/narrow.js';
import { IrReadError, readIr } from '../../../src/compiler/openvino/irReader.js';
import { writeIr } from '../../../src/compiler/openvino/irWriter.js';
import { irOf } from '../../../src/compiler/openvino/backend.js';
import { modelToXml } from '../../../src/compiler/openvino/xml.js';
import { representative } from './programs.js';

/** Expects readIr to refuse, naming `at` and a reason matching `reason`. */
function refused(xml: string, bin: Uint8Array, at: RegExp, reason: RegExp): void {
  let caught: unknown;
  try { readIr(xml, bin); } catch (e) { caught = e; }
  expect(caught, 'readIr should throw').to.be.instanceOf(IrReadError);
  const err = caught as IrReadError;
  expect(err.at, err.message).to.match(at);
  expect(err.reason, err.message).to.match(reason);
}

describe('compiler/openvino/irReader', () => {
  const { xml, bin } = irOf(representative());

  it('round-trips what the writer writes: layers, ports, edges and decoded constants', () => {
    const w = writeIr(narrowToDevicePrecision(representative()));
    const m = readIr(w.xml, w.bin);
    expect(m).to.deep.equal(w.model);
    expect(modelToXml(m)).to.equal(w.xml);
    const lit = m.layers.find((l) => l.name === 't.f16/lit1')!;
    expect(lit.constant).to.deep.equal({ elementType: 'f16', shape: [], offset: lit.constant!.offset, size: 2, values: [-65504] });
  });

  it('round-trips names the XML must escape', () => {
    // Value names are plain names (the format refuses others); a program's name is free text.
    const p = program('a<b & "c",\'d\'');
    const x = p.activation('x.y_1', 'f16', [2]);
    p.results(p.named('n.1').neg(x));
    const w = writeIr(checkProgram(p.build()));
    expect(w.xml).to.contain('name="a&lt;b &amp; &quot;c&quot;,&apos;d&apos;"');
    const m = readIr(w.xml, w.bin);
    expect(m).to.deep.equal(w.model);
    expect(m.name).to.equal('a<b & "c",\'d\'');
    expect(m.layers[0]!.outputs[0]!.names).to.deep.equal(['x.y_1']);
  });

  it('refuses text that is not well-formed XML, naming the line', () => {
    refused(xml.replace('</layers>', '</layer>'), bin, /^line \d+$/, /expected <\/layers>/);
    refused('<net version="11"><layers>', bin, /^line 1$/, /never closed/);
    refused(xml.replace('name="x"', 'name="x&bogus;"'), bin, /^line 4$/, /unknown entity/);
    refused(`<!DOCTYPE x [<!ENTITY a "b">]>${xml}`, bin, /^line 1$/, /DTD/);
  });

  it('refuses another IR version or root', () => {
    refused(xml.replace('version="11"', 'version="10"'), bin, /^net$/, /version "10" is not "11"/);
    refused('<model/>', bin, /^root$/, /not <net>/);
  });

  it('refuses a constant outside the .bin or of the wrong size', () => {
    refused(xml, bin.subarray(0, 50), /layer \d+ \(/, /beyond the \.bin's 50/);
    refused(xml.replace('shape="" offset="0" size="2"', 'shape="" offset="0" size="4"'), bin, /layer 8 \(s\/lit0\)/, /size 4 is not the 2 bytes/);
  });

  it('refuses ports out of order, unknown precisions and dims that are not numbers', () => {
    refused(xml.replace('<port id="2" precision="FP16" names="s">', '<port id="3" precision="FP16" names="s">'), bin, /layer 9 \(s\)/, /port 3 where port 2 belongs/);
    refused(xml.replace('precision="FP32" names="x"', 'precision="FP64" names="x"'), bin, /layer 0 \(x\) port 0/, /precision "FP64"/);
    refused(xml.replace('<dim>2</dim>', '<dim>-2</dim>'), bin, /layer 0 \(x\) port 0/, /not a non-negative integer/);
  });

  it('refuses broken edges: a missing port, a mismatched precision, an unfed or twice-fed input, a reused id', () => {
    refused(xml.replace('from-layer="0" from-port="0" to-layer="5"', 'from-layer="0" from-port="7" to-layer="5"'), bin, /^edge 0/, /no output port 7/);
    refused(xml.replace('from-layer="0" from-port="0" to-layer="5"', 'from-layer="2" from-port="0" to-layer="5"'), bin, /^edge 0/, /I32 \[2\] flows into a port declared FP32 \[2, 4\]/);
    refused(xml.replace(/\t\t<edge from-layer="0" from-port="0" to-layer="5" to-port="0" \/>\n/, ''), bin, /layer 5 \(x\.f16\)/, /input port 0 has no edge/);
    const twice = xml.replace('</edges>', '\t<edge from-layer="0" from-port="0" to-layer="5" to-port="0" />\n\t</edges>');
    refused(twice, bin, /^edge \d+/, /more than one edge/);
    refused(xml.replace('<layer id="1" name="w"', '<layer id="0" name="w"'), bin, /layer 0 \(w\)/, /used twice/);
  });

  it('refuses a cycle', () => {
    const cyc = [
      '<net name="c" version="11"><layers>',
      '<layer id="0" name="a" type="Negative" version="opset1"><input><port id="0" precision="FP16"/></input><output><port id="1" precision="FP16"/></output></layer>',
      '<layer id="1" name="b" type="Negative" version="opset1"><input><port id="0" precision="FP16"/></input><output><port id="1" precision="FP16"/></output></layer>',
      '</layers><edges><edge from-layer="0" from-port="1" to-layer="1" to-port="0"/><edge from-layer="1" from-port="1" to-layer="0" to-port="0"/></edges></net>',
    ].join('\n');
    refused(cyc, new Uint8Array(), /^edges$/, /cycle/);
  });
});
