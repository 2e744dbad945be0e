/**
 * Each core's kernel C++ source: the ordinary kernel body with its thread grid turned into loops. A
 * call handles one row chunk (see coreModel): pointwise kernels loop over the row's elements, row
 * kernels and reductions run their body over one input row and write scalar results at the row's index
 * in the group's output row, gather copies its tables in and then indexes them. Sizes known when the
 * region is compiled are baked in; the row length is still passed, as mlir-aie's kernels take it.
 */
import type { CheckedEqn } from '../../ir/checked.js';
import type { DType, Operand, RowBody } from '../../ir/types.js';
import { elementDtype, isLiteral, numel } from '../../ir/types.js';
import { elementType } from '../../ir/ops.js';
import { PRELUDE, binaryExpr, cliteral, ctype, reduceExpr, unaryExpr } from './cexpr.js';
import type { CoreModel } from './coreModel.js';
import { rowElems, vectorSteps } from './coreModel.js';

/** One argument of a kernel function, as the IRON Kernel declares it. */
export type KernelArg =
  | { readonly kind: 'chunk'; readonly dtype: DType; readonly elems: number }
  | { readonly kind: 'table'; readonly dtype: DType; readonly elems: number }
  | { readonly kind: 'int' };

interface KernelFn {
  readonly name: string;
  readonly args: readonly KernelArg[];
}

/** A core's kernel: the symbol it is known by, its functions (in call order) and its source. */
export interface CoreKernel {
  readonly symbol: string;
  readonly fns: readonly KernelFn[];
  readonly source: string;
}

const INT: KernelArg = { kind: 'int' };

function header(ce: CheckedEqn, what: string): string {
  const ty = (t: { dtype: string; shape: readonly number[] }) => `${t.dtype}[${t.shape.join(', ')}]`;
  return `// equation ${ce.index}: ${ce.op} ${ce.ins.map(ty).join(', ')} -> ${ce.outs.map(ty).join(', ')}; ${what}`;
}

function params(ce: CheckedEqn, m: CoreModel): string[] {
  const op = ce.op;
  return [
    ...m.reads.map((r, j) => `const ${ctype(r.dtype, ce.index, op)}* r${j}`),
    ...m.writes.map((w, k) => `${ctype(w.dtype, ce.index, op)}* w${k}`),
  ];
}

function chunkArgs(m: CoreModel): KernelArg[] {
  return [...m.reads, ...m.writes].map((s) => ({ kind: 'chunk', dtype: s.dtype, elems: s.chunk }));
}

function pointwise(ce: CheckedEqn, m: CoreModel, symbol: string): CoreKernel {
  const readIndex = new Map(m.reads.map((r, j) => [r.value, j]));
  const operand = (o: Operand, k: number): string => {
    if (isLiteral(o)) return cliteral(o, elementDtype(ce.ins[k]!.dtype, `literal ${k} of equation ${ce.index}`));
    const j = readIndex.get(o)!;
    return m.reads[j]!.held ? `r${j}[0]` : `r${j}[i]`;
  };
  const ins = ce.eqn.in.map(operand);
  const dtype = elementDtype(ce.ins[0]!.dtype, `equation ${ce.index}`);
  const expr = ins.length === 2 ? binaryExpr(ce.op, dtype, ins[0]!, ins[1]!, ce.index) : unaryExpr(ce.op, dtype, ins[0]!, ce.index);
  const source = [
    PRELUDE, header(ce, 'one output row per call'),
    `extern "C" void ${symbol}(${[...params(ce, m), 'int32_t n'].join(', ')}) {`,
    `  for (int32_t i = 0; i < n; i++) w0[i] = ${expr};`,
    '}', '',
  ].join('\n');
  return { symbol, fns: [{ name: symbol, args: [...chunkArgs(m), INT] }], source };
}

/** A row kernel's body as C statements over row pointers r<j> (params), writing w<k>. */
function bodyLines(ce: CheckedEqn, m: CoreModel, body: RowBody, dtype: DType, cols: number): string[] {
  const ct = ctype(dtype, ce.index, ce.op);
  const vec = vectorSteps(body);
  const names = new Map<string, { c: string; vector: boolean }>();
  const readIndex = new Map(m.reads.map((r, j) => [r.value, j]));
  body.params.forEach((p, j) => {
    const operand = ce.eqn.in[j]!;
    names.set(p, { c: isLiteral(operand) ? cliteral(operand, dtype) : `r${readIndex.get(operand)!}`, vector: !isLiteral(operand) });
  });
  const lines: string[] = [];
  const at = (o: Operand, i: string): string => {
    if (isLiteral(o)) return cliteral(o, o.dtype ?? dtype);
    const n = names.get(o)!;
    return n.vector ? `${n.c}[${i}]` : n.c;
  };
  body.steps.forEach((s, k) => {
    const id = `v${k}`;
    if (s.op === 'reduce_sum' || s.op === 'reduce_max') {
      const { init, step } = reduceExpr(s.op, dtype, id, at(s.in[0]!, 'i'), ce.index);
      lines.push(`  ${ct} ${id} = ${init};`, `  for (int32_t i = 0; i < c; i++) ${id} = ${step};`);
      names.set(s.out, { c: id, vector: false });
      return;
    }
    const expr = (i: string) => (s.in.length === 2
      ? binaryExpr(s.op, dtype, at(s.in[0]!, i), at(s.in[1]!, i), ce.index)
      : unaryExpr(s.op, dtype, at(s.in[0]!, i), ce.index));
    if (vec.has(s.out)) {
      // Body temporaries live in static tile memory (counted as the core's tempBytes), not the stack.
      lines.push(`  static ${ct} ${id}[${cols}];`, `  for (int32_t i = 0; i < c; i++) ${id}[i] = ${expr('i')};`);
      names.set(s.out, { c: id, vector: true });
    } else {
      lines.push(`  ${ct} ${id} = ${expr('0')};`);
      names.set(s.out, { c: id, vector: false });
    }
  });
  body.results.forEach((r, k) => {
    const n = names.get(r)!;
    if (m.writes[k]!.perGroup) lines.push(`  w${k}[k] = ${n.vector ? `${n.c}[0]` : n.c};`);
    else lines.push(`  for (int32_t i = 0; i < c; i++) w${k}[i] = ${n.vector ? `${n.c}[i]` : n.c};`);
  });
  return lines;
}

function rows(ce: CheckedEqn, m: CoreModel, symbol: string): CoreKernel {
  const dtype = m.reads[0]?.dtype ?? ce.outs[0]!.dtype;
  let lines: string[];
  if (ce.op === 'row_kernel') {
    lines = bodyLines(ce, m, ce.eqn.attrs['body'] as RowBody, dtype, m.cols);
  } else {
    const { init, step } = reduceExpr(ce.op, dtype, 'acc', 'r0[i]', ce.index);
    lines = [`  ${ctype(dtype, ce.index, ce.op)} acc = ${init};`, `  for (int32_t i = 0; i < c; i++) acc = ${step};`, '  w0[k] = acc;'];
  }
  const source = [
    PRELUDE, header(ce, 'one input row per call; k is the row within its group'),
    `extern "C" void ${symbol}(${[...params(ce, m), 'int32_t k', 'int32_t c'].join(', ')}) {`,
    ...lines, '}', '',
  ].join('\n');
  return { symbol, fns: [{ name: symbol, args: [...chunkArgs(m), INT, INT] }], source };
}

function gather(ce: CheckedEqn, m: CoreModel, symbol: string): CoreKernel {
  const src = elementType(ce.ins[0]!, `the source of equation ${ce.index}`);
  const idxOperand = ce.eqn.in[1]!;
  const axis = ce.eqn.attrs['axis'] as number;
  const extent = src.shape[axis]!;
  // Moduli of at least 1, so an empty tensor (which runs no iteration) still compiles.
  const inner = Math.max(1, numel(src.shape.slice(axis + 1)));
  const count = isLiteral(idxOperand) ? 1 : Math.max(1, numel(ce.ins[1]!.shape));
  const st = ctype(src.dtype, ce.index, ce.op);
  const fns: KernelFn[] = [];
  const lines: string[] = [PRELUDE, header(ce, 'tables are copied in row by row, then one output row per call')];
  // One table per distinct operand value: gather(x, x) over an i32 x loads x once.
  m.reads.forEach((r, j) => {
    const t = ctype(r.dtype, ce.index, ce.op);
    const name = `${symbol}_load${j}`;
    fns.push({ name, args: [{ kind: 'chunk', dtype: r.dtype, elems: r.chunk }, { kind: 'table', dtype: r.dtype, elems: numel(r.shape) }, INT, INT] });
    lines.push(`extern "C" void ${name}(const ${t}* row, ${t}* table, int32_t r, int32_t c) {`, '  for (int32_t i = 0; i < c; i++) table[r * c + i] = row[i];', '}');
  });
  const table = (o: Operand) => `t${m.reads.findIndex((r) => r.value === o)}`;
  const idx = isLiteral(idxOperand) ? cliteral(idxOperand, 'i32') : `${table(idxOperand)}[j]`;
  const tableParams = m.reads.map((r, j) => `const ${ctype(r.dtype, ce.index, ce.op)}* t${j}`);
  fns.push({ name: symbol, args: [...m.reads.map((r): KernelArg => ({ kind: 'table', dtype: r.dtype, elems: numel(r.shape) })), { kind: 'chunk', dtype: src.dtype, elems: rowElems(ce.outs[0]!.shape) }, INT, INT] });
  lines.push(
    `extern "C" void ${symbol}(${[...tableParams, `${st}* w0`, 'int32_t row', 'int32_t n'].join(', ')}) {`,
    '  for (int32_t i = 0; i < n; i++) {',
    `    int32_t flat = row * n + i;`,
    `    int32_t e = flat % ${inner}, j = (flat / ${inner}) % ${count}, o = flat / ${inner} / ${count};`,
    '    (void)j;',
    // An index outside the axis is not checked, as on the GPU kernel.
    `    w0[i] = ${table(isLiteral(ce.eqn.in[0]!) ? '' : ce.eqn.in[0]!)}[(o * ${extent} + ${idx}) * ${inner} + e];`,
    '  }', '}', '',
  );
  return { symbol, fns, source: lines.join('\n') };
}

/** The kernel of one core; its symbol is unique in the region (`e<eqn>_<op>_<dtype>`). */
export function coreKernel(ce: CheckedEqn, m: CoreModel): CoreKernel {
  const symbol = `e${ce.index}_${ce.op}_${ce.outs[0]!.dtype}`;
  switch (m.kind) {
    case 'pointwise': return pointwise(ce, m, symbol);
    case 'rows': return rows(ce, m, symbol);
    case 'gather': return gather(ce, m, symbol);
  }
}
