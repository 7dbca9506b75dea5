// Writes src/intel/time-zones.json: each IANA time zone name (and its backward-compatible aliases)
// with the ISO 3166-1 codes of the countries that use it, from the tz database's zone.tab,
// zone1970.tab and tzdata.zi (public domain; Debian's tzdata package puts them in
// /usr/share/zoneinfo). Run when tzdata changes: node dist/scripts/gen-time-zones.js [dir]
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = process.argv[2] ?? '/usr/share/zoneinfo';
const rows = (file: string): string[][] => readFileSync(`${dir}/${file}`, 'utf8').split('\n')
  .filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.split('\t'));

// zone.tab names one country per zone, including zones that zone1970.tab folds into another
// (Europe/Stockholm): where it has the zone, its country is the precise answer.
const own = new Map<string, Set<string>>();
for (const [cc, , zone] of rows('zone.tab')) {
  if (!own.has(zone!)) own.set(zone!, new Set());
  own.get(zone!)!.add(cc!);
}
const shared = new Map<string, Set<string>>();
for (const [codes, , zone] of rows('zone1970.tab')) shared.set(zone!, new Set(codes!.split(',')));
const countriesOf = (zone: string): Set<string> | undefined => own.get(zone) ?? shared.get(zone);

const out: Record<string, string[]> = {};
for (const zone of new Set([...own.keys(), ...shared.keys()])) out[zone] = [...countriesOf(zone)!].sort();
// Links ("L target alias"): an alias without an entry of its own takes its target's countries.
for (const line of readFileSync(`${dir}/tzdata.zi`, 'utf8').split('\n')) {
  if (!line.startsWith('L ')) continue;
  const [, target, alias] = line.split(' ');
  if (out[alias!] !== undefined || alias!.startsWith('Etc/')) continue;
  const countries = countriesOf(target!);
  if (countries !== undefined) out[alias!] = [...countries].sort();
}
const sorted = Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
const target = fileURLToPath(new URL('../../src/intel/time-zones.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(sorted, null, 0).replace(/\],/g, '],\n')}\n`);
console.log(`${Object.keys(sorted).length} time zones → ${target}`);
