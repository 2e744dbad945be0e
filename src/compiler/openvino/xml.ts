/**
 * The IR's .xml text: the serializer of an IrModel and the small XML parser readIr() uses. Only the
 * subset an IR uses is read: a declaration, comments, elements with quoted attributes, and text inside
 * `<dim>`; no DTD, CDATA or namespaces, so a hostile file cannot expand entities.
 */
import type { IrLayer, IrModel, IrPort } from './irModel.js';

/** Escapes a string for a double-quoted attribute value or text. */
function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

// The IR separates tensor names with commas, so a comma inside one name is written `\,`.
function joinNames(names: readonly string[]): string {
  return names.map((n) => n.replace(/\\/g, '\\\\').replace(/,/g, '\\,')).join(',');
}

/** Splits a `names` attribute into tensor names, undoing joinNames' escapes. */
export function splitNames(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) { cur += s[++i]!; continue; }
    if (c === ',') { out.push(cur); cur = ''; continue; }
    cur += c;
  }
  out.push(cur);
  return out;
}

function attrs(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([k, v]) => ` ${k}="${escapeXml(v)}"`).join('');
}

function port(p: IrPort, indent: string): string[] {
  const head = `${indent}<port${attrs([['id', String(p.id)], ['precision', p.precision], ...(p.names ? [['names', joinNames(p.names)] as const] : [])])}`;
  if (p.dims.length === 0) return [`${head} />`];
  return [`${head}>`, ...p.dims.map((d) => `${indent}\t<dim>${d}</dim>`), `${indent}</port>`];
}

function layer(l: IrLayer): string[] {
  const t = '\t\t\t';
  const out = [`\t\t<layer${attrs([['id', String(l.id)], ['name', l.name], ['type', l.type], ['version', l.version]])}>`];
  const data = Object.entries(l.data);
  if (data.length > 0) out.push(`${t}<data${attrs(data)} />`);
  for (const [tag, ports] of [['input', l.inputs], ['output', l.outputs]] as const) {
    if (ports.length === 0) continue;
    out.push(`${t}<${tag}>`, ...ports.flatMap((p) => port(p, `${t}\t`)), `${t}</${tag}>`);
  }
  out.push('\t\t</layer>');
  return out;
}

/** The .xml text of a model: tab-indented, one element per line, LF line ends, attributes in a fixed order. */
export function modelToXml(m: IrModel): string {
  const lines = [
    '<?xml version="1.0"?>',
    `<net name="${escapeXml(m.name)}" version="${m.version}">`,
    '\t<layers>',
    ...m.layers.flatMap(layer),
    '\t</layers>',
    '\t<edges>',
    ...m.edges.map((e) => `\t\t<edge${attrs([['from-layer', String(e.fromLayer)], ['from-port', String(e.fromPort)], ['to-layer', String(e.toLayer)], ['to-port', String(e.toPort)]])} />`),
    '\t</edges>',
    '\t<rt_info />',
    '</net>',
  ];
  return `${lines.join('\n')}\n`;
}

/** A parsed XML element: its tag, attributes in document order, child elements and direct text. */
export interface XmlElement {
  readonly tag: string;
  readonly attrs: Readonly<Record<string, string>>;
  readonly children: readonly XmlElement[];
  readonly text: string;
  /** 1-based line of the start tag, for messages. */
  readonly line: number;
}

/** A malformed XML text; `line` is 1-based. */
export class XmlSyntaxError extends Error {
  constructor(readonly line: number, readonly reason: string) {
    super(`xml line ${line}: ${reason}`);
  }
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function unescape(s: string, line: number): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-z]+);?/g, (all, ent: string) => {
    if (!all.endsWith(';')) throw new XmlSyntaxError(line, `an entity ${all} without its ';'`);
    if (ent.startsWith('#x')) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    if (ent.startsWith('#')) return String.fromCodePoint(parseInt(ent.slice(1), 10));
    const v = ENTITIES[ent];
    if (v === undefined) throw new XmlSyntaxError(line, `unknown entity &${ent};`);
    return v;
  });
}

// Sticky, so each match starts exactly at lastIndex without slicing the text (slicing is quadratic).
const NAME = /[A-Za-z_][\w.:-]*/y;
const ATTR = /\s+([A-Za-z_][\w.:-]*)\s*=\s*("([^"<]*)"|'([^'<]*)')/y;
const WS = /\s*/y;
const CLOSE_END = /\s*>/y;

function matchAt(re: RegExp, text: string, pos: number): RegExpExecArray | null {
  re.lastIndex = pos;
  return re.exec(text);
}

/** Parses XML text into its root element; throws XmlSyntaxError at the first fault. */
export function parseXml(text: string): XmlElement {
  let pos = 0;
  const newlines: number[] = [];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) newlines.push(i);
  const lineAt = (p: number) => {
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (newlines[mid]! < p) lo = mid + 1; else hi = mid; }
    return lo + 1;
  };
  const fail = (reason: string, p = pos): never => { throw new XmlSyntaxError(lineAt(p), reason); };
  const skipMisc = () => {
    for (;;) {
      pos += matchAt(WS, text, pos)![0].length;
      if (text.startsWith('<?', pos)) { const e = text.indexOf('?>', pos); if (e < 0) fail('an unterminated <? ?>'); pos = e + 2; continue; }
      if (text.startsWith('<!--', pos)) { const e = text.indexOf('-->', pos); if (e < 0) fail('an unterminated comment'); pos = e + 3; continue; }
      if (text.startsWith('<!', pos)) fail('a DTD or CDATA section, which an IR never holds');
      return;
    }
  };
  const element = (): XmlElement => {
    const start = pos;
    if (text[pos] !== '<') fail('expected an element');
    pos++;
    const tag = matchAt(NAME, text, pos)?.[0] ?? fail('expected a tag name');
    pos += tag.length;
    const at: Record<string, string> = {};
    for (let m = matchAt(ATTR, text, pos); m; m = matchAt(ATTR, text, pos)) {
      if (Object.hasOwn(at, m[1]!)) fail(`attribute ${m[1]} given twice`);
      at[m[1]!] = unescape(m[3] ?? m[4] ?? '', lineAt(pos));
      pos += m[0].length;
    }
    pos += matchAt(WS, text, pos)![0].length;
    const line = lineAt(start);
    if (text.startsWith('/>', pos)) { pos += 2; return { tag, attrs: at, children: [], text: '', line }; }
    if (text[pos] !== '>') fail(`malformed start tag <${tag}>`);
    pos++;
    const children: XmlElement[] = [];
    let body = '';
    for (;;) {
      const lt = text.indexOf('<', pos);
      if (lt < 0) fail(`<${tag}> is never closed`, start);
      body += text.slice(pos, lt);
      pos = lt;
      if (text.startsWith('</', pos)) {
        const close = `</${tag}`;
        if (!text.startsWith(close, pos) || !matchAt(CLOSE_END, text, pos + close.length)) fail(`expected </${tag}>`);
        pos = text.indexOf('>', pos) + 1;
        return { tag, attrs: at, children, text: unescape(body, line).trim(), line };
      }
      if (text.startsWith('<!--', pos)) { const e = text.indexOf('-->', pos); if (e < 0) fail('an unterminated comment'); pos = e + 3; continue; }
      children.push(element());
    }
  };
  skipMisc();
  const root = element();
  skipMisc();
  if (pos < text.length) fail('text after the root element');
  return root;
}
