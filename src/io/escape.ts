/**
 * Making untrusted text safe to print. Names, keys and strings come out of files a user was handed (a
 * manifest, a GGUF, a program); quoted raw into a message, an ESC or BEL in them would drive the
 * terminal that shows the message. Every control character is written as an escape instead, in a form
 * that is also valid inside a JSON string, so escaping a JSON document leaves it the same document.
 */

/** C0 controls, DEL, C1 controls and the bidirectional overrides that reorder what a terminal shows. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(c: string): string {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` with every control character written as `\n`, `\t`, `\r` or `\u00XX`; other text unchanged. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, escapeOne);
}

/** Escapes each line of `text` but keeps its line breaks: for output that is several lines by design. */
export function escapeLines(text: string): string {
  return text.split('\n').map(escapeControl).join('\n');
}

/** A string quoted for a message: JSON's quoting, with every control character escaped. */
export function quote(text: string): string {
  return escapeControl(JSON.stringify(text));
}

/**
 * A value as a user wrote it, for a message: numbers as JavaScript writes them (`Infinity` from a
 * parsed `1e400`, where JSON would write `null`), a function as such, anything else as JSON (or its
 * tag, when it cannot be written so).
 */
export function shown(v: unknown): string {
  try {
    if (typeof v === 'number' || v === undefined) return String(v);
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- reached only when JSON has no text for v: a symbol, or a toJSON answering undefined
    return typeof v === 'function' ? 'a function' : JSON.stringify(v) ?? String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}
