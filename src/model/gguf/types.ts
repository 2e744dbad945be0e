/**
 * The data a GGUF file holds: typed metadata values and tensor infos. Every value keeps its GGUF type,
 * so a file read and written again is the same file; 64-bit integers are bigint because a u64 count
 * or id does not fit a double.
 */

/** The GGUF value types, numbered as the format numbers them. */
export const GGUF_VALUE_TYPES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'] as const;

/** A GGUF value type name; its index in GGUF_VALUE_TYPES is its number in the file. */
export type GgufValueType = (typeof GGUF_VALUE_TYPES)[number];

/** The value types held as a JS number. */
export type GgufNumberType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'f32' | 'f64';
/** The value types held as a bigint. */
export type GgufBigType = 'u64' | 'i64';

/** An array value: its item type and items; nested arrays carry their own item types. */
export type GgufArray =
  | { readonly type: 'array'; readonly itemType: GgufNumberType; readonly value: readonly number[] }
  | { readonly type: 'array'; readonly itemType: GgufBigType; readonly value: readonly bigint[] }
  | { readonly type: 'array'; readonly itemType: 'bool'; readonly value: readonly boolean[] }
  | { readonly type: 'array'; readonly itemType: 'string'; readonly value: readonly string[] }
  | { readonly type: 'array'; readonly itemType: 'array'; readonly value: readonly GgufArray[] };

/** One metadata value with its GGUF type. */
export type GgufValue =
  | { readonly type: GgufNumberType; readonly value: number }
  | { readonly type: GgufBigType; readonly value: bigint }
  | { readonly type: 'bool'; readonly value: boolean }
  | { readonly type: 'string'; readonly value: string }
  | GgufArray;

/** Metadata in file order. */
export type GgufMetadata = ReadonlyMap<string, GgufValue>;

/** Typed constructors for metadata values, so callers never spell `{ type, value }` by hand. */
export const gv = {
  u8: (value: number): GgufValue => ({ type: 'u8', value }),
  i8: (value: number): GgufValue => ({ type: 'i8', value }),
  u16: (value: number): GgufValue => ({ type: 'u16', value }),
  i16: (value: number): GgufValue => ({ type: 'i16', value }),
  u32: (value: number): GgufValue => ({ type: 'u32', value }),
  i32: (value: number): GgufValue => ({ type: 'i32', value }),
  f32: (value: number): GgufValue => ({ type: 'f32', value }),
  f64: (value: number): GgufValue => ({ type: 'f64', value }),
  u64: (value: bigint): GgufValue => ({ type: 'u64', value }),
  i64: (value: bigint): GgufValue => ({ type: 'i64', value }),
  bool: (value: boolean): GgufValue => ({ type: 'bool', value }),
  str: (value: string): GgufValue => ({ type: 'string', value }),
  strings: (value: readonly string[]): GgufArray => ({ type: 'array', itemType: 'string', value }),
  numbers: (itemType: GgufNumberType, value: readonly number[]): GgufArray => ({ type: 'array', itemType, value }),
  bigints: (itemType: GgufBigType, value: readonly bigint[]): GgufArray => ({ type: 'array', itemType, value }),
  bools: (value: readonly boolean[]): GgufArray => ({ type: 'array', itemType: 'bool', value }),
  arrays: (value: readonly GgufArray[]): GgufArray => ({ type: 'array', itemType: 'array', value }),
};

/** A tensor's entry in the header, checked: sizes fit the file and safe integers. */
export interface GgufTensorInfo {
  readonly name: string;
  /** ne[0] first: the fastest-varying dimension (a projection's input features). */
  readonly dims: readonly number[];
  /** The ggml type id. */
  readonly type: number;
  /** The ggml type name (Q4_K, F32, ...). */
  readonly typeName: string;
  /** Offset from the start of the data section, as the file declares it. */
  readonly offset: number;
  /** Offset from the start of the file. */
  readonly fileOffset: number;
  readonly elements: number;
  readonly byteSize: number;
}

/** A parsed GGUF file: header, metadata, tensor infos, and access to tensor data. */
export interface GgufFile {
  readonly version: 2 | 3;
  readonly alignment: number;
  readonly metadata: GgufMetadata;
  readonly tensors: readonly GgufTensorInfo[];
  /** Where the (aligned) data section starts, from the start of the file. */
  readonly dataOffset: number;
  /** The size of the whole file in bytes. */
  readonly size: number;
  /** The tensor of this name, or undefined. */
  tensor(name: string): GgufTensorInfo | undefined;
  /** A tensor's raw bytes (a view for an in-memory file, a read for an opened one). */
  tensorBytes(t: GgufTensorInfo | string): Uint8Array;
  /** A tensor dequantized to f32, ne[0] fastest; a GgufError for a type this package cannot decode. */
  tensorFloats(t: GgufTensorInfo | string): Float32Array;
  /** Releases the file handle of an opened file (a no-op in memory). */
  close(): void;
}

/** The plain JS form of a metadata value (numbers, bigints, strings, booleans, nested arrays). */
export type GgufPlain = number | bigint | boolean | string | readonly GgufPlain[];

/** A metadata value without its GGUF type, for printing and for comparing with a config. */
export function plainValue(v: GgufValue): GgufPlain {
  if (v.type !== 'array') return v.value;
  if (v.itemType === 'array') return v.value.map(plainValue);
  return v.value;
}

/** A metadata value as a finite number when it is numeric, else undefined. */
export function numericValue(v: GgufValue | undefined): number | undefined {
  if (v === undefined || v.type === 'array' || v.type === 'string') return undefined;
  if (v.type === 'bool') return v.value ? 1 : 0;
  return Number(v.value);
}
