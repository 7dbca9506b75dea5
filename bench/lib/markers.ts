// Generated sections of a page (README.md, bench/README.md): the text between a start and an end
// marker is replaced, the rest of the page kept. Used by the benchmark, e-mail and eval reports.
import { readFileSync, writeFileSync } from 'node:fs';

/** `text` with the part between the markers replaced by `section`; null when a marker is missing. */
export function replaceBetween(text: string, start: string, end: string, section: string): string | null {
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) return null;
  return `${text.slice(0, from + start.length)}\n${section}\n${text.slice(to)}`;
}

/** Rewrites the section of the file at `path`; false (file untouched) when a marker is missing. */
export function updateFileBetween(path: string, start: string, end: string, section: string): boolean {
  const next = replaceBetween(readFileSync(path, 'utf8'), start, end, section);
  if (next === null) return false;
  writeFileSync(path, next);
  return true;
}
