// The embedded ASN index: autonomous-system number and organisation by address range, from the
// CSV files of @ip-location-db/asn (RouteViews, the five RIRs and DB-IP, CC BY 4.0; no MMDB build
// of it is published on npm). The files are sorted, non-overlapping inclusive ranges
// (start,end,asn,organisation). A worker thread parses them into typed arrays (IPv4: start, end,
// ASN as Uint32Array; IPv6: 4 big-endian words per bound, as src/lists/range-set.ts keeps them)
// plus one table of organisation names, and transfers them back; lookups bisect, allocating
// nothing for IPv4 (docs/intel.md has the measured build time and size).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { addressKey, compareWords, lastAtOrBelow4, lastAtOrBelow6, newAddressKey } from '../lists/range-set.js';

export interface AsnArrays {
  readonly v4Start: Uint32Array;
  readonly v4End: Uint32Array;
  readonly v4Asn: Uint32Array;
  readonly v6Start: Uint32Array;
  readonly v6End: Uint32Array;
  readonly v6Asn: Uint32Array;
  /** ASN → organisation, as parallel arrays sorted by ASN. */
  readonly orgAsn: Uint32Array;
  readonly orgNames: readonly string[];
}

export interface AsnAnswer {
  readonly asn: number;
  readonly org: string | null;
}

export class AsnIndex {
  readonly #a: AsnArrays;
  readonly #key = newAddressKey();
  /** One frozen answer per ASN, made on first use. */
  readonly #answers = new Map<number, AsnAnswer>();

  constructor(arrays: AsnArrays) {
    this.#a = arrays;
  }

  static readonly EMPTY = new AsnIndex({
    v4Start: new Uint32Array(0), v4End: new Uint32Array(0), v4Asn: new Uint32Array(0),
    v6Start: new Uint32Array(0), v6End: new Uint32Array(0), v6Asn: new Uint32Array(0), orgAsn: new Uint32Array(0), orgNames: [],
  });

  get size(): number { return this.#a.v4Asn.length + this.#a.v6Asn.length; }

  get bytes(): number {
    const a = this.#a;
    let strings = 0;
    for (const s of a.orgNames) strings += s.length;
    return a.v4Start.byteLength * 3 + a.v6Start.byteLength * 2 + a.v6Asn.byteLength + a.orgAsn.byteLength + strings;
  }

  lookup(ip: string): AsnAnswer | null {
    const k = addressKey(ip, this.#key);
    let asn = 0;
    if (k.family === 4) {
      const i = lastAtOrBelow4(this.#a.v4Start, k.v4);
      if (i >= 0 && this.#a.v4End[i]! >= k.v4) asn = this.#a.v4Asn[i]!;
    } else if (k.family === 6) {
      const i = lastAtOrBelow6(this.#a.v6Start, k.words);
      if (i >= 0 && compareWords(this.#a.v6End, i * 4, k.words) >= 0) asn = this.#a.v6Asn[i]!;
    }
    if (asn === 0) return null;
    let answer = this.#answers.get(asn);
    if (answer === undefined) {
      const j = lastAtOrBelow4(this.#a.orgAsn, asn);
      answer = Object.freeze({ asn, org: j >= 0 && this.#a.orgAsn[j] === asn ? this.#a.orgNames[j]! : null });
      this.#answers.set(asn, answer);
    }
    return answer;
  }
}

/** The CSV files of the embedded ASN data. */
export function embeddedAsnFiles(): { v4: string; v6: string } {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('@ip-location-db/asn/package.json'));
  return { v4: join(dir, 'asn-ipv4.csv'), v6: join(dir, 'asn-ipv6.csv') };
}

const WORKER_URL = new URL('./asn-build-worker.js', import.meta.url);

/** Builds the index from the two CSV files in a worker thread. */
export function loadAsnIndex(files: { v4: string; v6: string }): Promise<AsnIndex> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: files });
    let settled = false;
    worker.once('message', (reply: { ok: true; arrays: AsnArrays } | { ok: false; message: string }) => {
      settled = true;
      void worker.terminate();
      if (reply.ok) resolve(new AsnIndex(reply.arrays));
      else reject(new Error(reply.message));
    });
    worker.once('error', (err) => { if (!settled) { settled = true; reject(err); } });
    worker.once('exit', (code) => { if (!settled) { settled = true; reject(new Error(`ASN build thread exited with ${code}`)); } });
  });
}
