// A tiny MMDB writer for fixtures (MaxMind DB format 2.0, https://maxmind.github.io/MaxMind-DB/):
// an IPv4 database whose one-node search tree splits the address space in two halves, each half
// with its own record (or none). No MMDB writer is published on npm for Node; the format is small.
import { gzipSync } from 'node:zlib';

type Value = string | number | Value[] | { [k: string]: Value };

export interface TinyMmdbOptions {
  /** Record of 0.0.0.0/1 (null = no data). */
  readonly low: Record<string, Value> | null;
  /** Record of 128.0.0.0/1. */
  readonly high: Record<string, Value> | null;
  readonly databaseType?: string;
}

export function tinyMmdb(o: TinyMmdbOptions): Buffer {
  const nodeCount = 1;
  const data: Buffer[] = [];
  let dataLength = 0;
  const put = (v: Record<string, Value> | null): number => {
    if (v === null) return nodeCount; // the "no data" marker
    const bytes = encode(v);
    const at = dataLength;
    data.push(bytes);
    dataLength += bytes.length;
    return nodeCount + 16 + at;
  };
  const left = put(o.low);
  const right = put(o.high);
  const tree = Buffer.alloc(6);
  tree.writeUIntBE(left, 0, 3);
  tree.writeUIntBE(right, 3, 3);
  const metadata = encode({
    node_count: u32(nodeCount), record_size: u16(24), ip_version: u16(4), database_type: o.databaseType ?? 'Test',
    languages: ['en'], binary_format_major_version: u16(2), binary_format_minor_version: u16(0), build_epoch: u64(1_700_000_000),
    description: { en: 'test fixture' },
  });
  return Buffer.concat([tree, Buffer.alloc(16), ...data, Buffer.from('\xab\xcd\xefMaxMind.com', 'latin1'), metadata]);
}

/** `files` as a gzipped ustar archive (a folder first, as MaxMind's archives have). */
export function tarGz(files: Record<string, Buffer>): Buffer {
  const parts: Buffer[] = [];
  const header = (name: string, size: number, type: string) => {
    const h = Buffer.alloc(512);
    h.write(name, 0, 'latin1');
    h.write('0000644\0', 100, 'latin1');
    h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
    h.write(type, 156, 'latin1');
    h.write('ustar\x0000', 257, 'latin1');
    return h;
  };
  parts.push(header('GeoLite2-City_20260101/', 0, '5'));
  for (const [name, body] of Object.entries(files)) {
    parts.push(header(`GeoLite2-City_20260101/${name}`, body.length, '0'), body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}

// Typed numbers: plain numbers encode as uint32.
const U16 = Symbol('u16');
const U64 = Symbol('u64');
function u16(n: number): Value { return { [U16]: n } as unknown as Value; }
function u32(n: number): Value { return n; }
function u64(n: number): Value { return { [U64]: n } as unknown as Value; }

function control(type: number, size: number): Buffer {
  if (size >= 29) throw new RangeError('fixture values stay short');
  return type <= 7 ? Buffer.from([(type << 5) | size]) : Buffer.from([size, type - 7]);
}

function uint(type: number, n: number): Buffer {
  const bytes: number[] = [];
  for (let x = n; x > 0; x = Math.floor(x / 256)) bytes.unshift(x % 256);
  return Buffer.concat([control(type, bytes.length), Buffer.from(bytes)]);
}

function encode(v: Value): Buffer {
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([control(2, b.length), b]);
  }
  if (typeof v === 'number') return uint(6, v);
  if (Array.isArray(v)) return Buffer.concat([control(11, v.length), ...v.map(encode)]);
  const o = v as Record<string | symbol, unknown>;
  if (o[U16] !== undefined) return uint(5, o[U16] as number);
  if (o[U64] !== undefined) return uint(9, o[U64] as number);
  const entries = Object.entries(v);
  return Buffer.concat([control(7, entries.length), ...entries.flatMap(([k, x]) => [encode(k), encode(x)])]);
}
