// Worker-thread entry of loadAsnIndex (asn-index.ts): parses the ASN CSV files and transfers the
// typed arrays back. Rows that do not parse are skipped. Runs nothing at import in the main thread.
import { readFileSync } from 'node:fs';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ipv6Groups } from '../ip.js';
import { parseIPv4 } from '../lists/ip-ranges.js';
import type { AsnArrays } from './asn-index.js';

if (!isMainThread && parentPort !== null) {
  const files = workerData as { v4: string; v6: string };
  try {
    const arrays = buildAsnArrays(readFileSync(files.v4, 'utf8'), readFileSync(files.v6, 'utf8'));
    parentPort.postMessage({ ok: true, arrays }, [
      arrays.v4Start.buffer, arrays.v4End.buffer, arrays.v4Asn.buffer, arrays.v6Start.buffer, arrays.v6End.buffer,
      arrays.v6Asn.buffer, arrays.orgAsn.buffer,
    ] as ArrayBuffer[]);
  } catch (err) {
    parentPort.postMessage({ ok: false, message: (err as Error).message });
  }
}

export function buildAsnArrays(v4Text: string, v6Text: string): AsnArrays {
  const orgs = new Map<number, string>();
  const v4Lines = v4Text.split('\n');
  const v4Start = new Uint32Array(v4Lines.length);
  const v4End = new Uint32Array(v4Lines.length);
  const v4Asn = new Uint32Array(v4Lines.length);
  let n4 = 0;
  for (const line of v4Lines) {
    const row = splitRow(line);
    if (row === null) continue;
    const s = parseIPv4(row[0]);
    const e = parseIPv4(row[1]);
    if (s < 0 || e < s || (n4 > 0 && s <= v4End[n4 - 1]!)) continue;
    v4Start[n4] = s; v4End[n4] = e; v4Asn[n4] = row[2];
    n4++;
    if (row[3] !== '' && !orgs.has(row[2])) orgs.set(row[2], row[3]);
  }
  const v6Lines = v6Text.split('\n');
  const v6Start = new Uint32Array(v6Lines.length * 4);
  const v6End = new Uint32Array(v6Lines.length * 4);
  const v6Asn = new Uint32Array(v6Lines.length);
  let n6 = 0;
  for (const line of v6Lines) {
    const row = splitRow(line);
    if (row === null) continue;
    const s = ipv6Groups(row[0]);
    const e = ipv6Groups(row[1]);
    if (s === null || e === null) continue;
    for (let w = 0; w < 4; w++) {
      v6Start[n6 * 4 + w] = ((s[2 * w]! << 16) | s[2 * w + 1]!) >>> 0;
      v6End[n6 * 4 + w] = ((e[2 * w]! << 16) | e[2 * w + 1]!) >>> 0;
    }
    v6Asn[n6] = row[2];
    n6++;
    if (row[3] !== '' && !orgs.has(row[2])) orgs.set(row[2], row[3]);
  }
  const sorted = [...orgs.keys()].sort((a, b) => a - b);
  return {
    v4Start: v4Start.slice(0, n4), v4End: v4End.slice(0, n4), v4Asn: v4Asn.slice(0, n4),
    v6Start: v6Start.slice(0, n6 * 4), v6End: v6End.slice(0, n6 * 4), v6Asn: v6Asn.slice(0, n6),
    orgAsn: Uint32Array.from(sorted), orgNames: sorted.map((a) => orgs.get(a)!),
  };
}

/** start,end,asn,organisation (the organisation may be quoted and hold commas). */
function splitRow(line: string): [string, string, number, string] | null {
  const a = line.indexOf(',');
  const b = line.indexOf(',', a + 1);
  const c = line.indexOf(',', b + 1);
  if (a < 0 || b < 0 || c < 0) return null;
  const asn = Number(line.slice(b + 1, c));
  if (!Number.isInteger(asn) || asn <= 0 || asn > 0xffffffff) return null;
  let org = line.slice(c + 1).trimEnd();
  if (org.startsWith('"') && org.endsWith('"')) org = org.slice(1, -1).replace(/""/g, '"');
  return [line.slice(0, a), line.slice(a + 1, b), asn, org];
}
