/**
 * A small JSON Schema validator for the tests (our own, independent of the grammar compiler): the
 * keywords structured output supports. Returns the first problem as a path and reason, or undefined.
 */
type Schema = Record<string, unknown> | boolean;

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function validate(schema: Schema, value: unknown, root: Schema = schema, path = '$'): string | undefined {
  if (schema === true) return undefined;
  if (schema === false) return `${path}: nothing is allowed`;
  const s = schema;
  if (typeof s.$ref === 'string') {
    const ref = s.$ref;
    const target = ref === '#' ? root : (root as Record<string, Record<string, Schema>>)[ref.split('/')[1]!]![ref.split('/')[2]!]!;
    return validate(target, value, root, path);
  }
  if ('const' in s && JSON.stringify(s.const) !== JSON.stringify(value)) return `${path}: not the const`;
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) return `${path}: not in the enum`;
  if (Array.isArray(s.anyOf)) {
    const fails = s.anyOf.map((x) => validate(x as Schema, value, root, path));
    if (fails.every((f) => f !== undefined)) return `${path}: no anyOf branch (${fails.join('; ')})`;
  }
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const t = typeOf(value);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) return `${path}: a ${t}, not ${types.join('|')}`;
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return `${path}: ${value} < minimum ${s.minimum}`;
    if (typeof s.maximum === 'number' && value > s.maximum) return `${path}: ${value} > maximum ${s.maximum}`;
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) return `${path}: ${value} <= exclusiveMinimum`;
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) return `${path}: ${value} >= exclusiveMaximum`;
  }
  if (typeof value === 'string') {
    // eslint-disable-next-line @typescript-eslint/no-misused-spread -- a JSON Schema length counts code points
    const n = [...value].length;
    if (typeof s.minLength === 'number' && n < s.minLength) return `${path}: length ${n} < minLength`;
    if (typeof s.maxLength === 'number' && n > s.maxLength) return `${path}: length ${n} > maxLength`;
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return `${path}: fewer than minItems`;
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return `${path}: more than maxItems`;
    if (s.items !== undefined) for (const [i, x] of value.entries()) { const f = validate(s.items as Schema, x, root, `${path}[${i}]`); if (f !== undefined) return f; }
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const r of (s.required ?? []) as string[]) if (!Object.hasOwn(o, r)) return `${path}: missing ${r}`;
    for (const [k, v] of Object.entries(o)) {
      if (Object.hasOwn(props, k)) { const f = validate(props[k]!, v, root, `${path}.${k}`); if (f !== undefined) return f; } else if (s.additionalProperties === false) return `${path}: extra property ${k}`;
    }
  }
  return undefined;
}

/** The text parsed and validated: the problem, or undefined when it is valid JSON under the schema. */
export function problem(schema: Schema, text: string): string | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return `not JSON: ${JSON.stringify(text.slice(0, 80))}`;
  }
  return validate(schema, v);
}
