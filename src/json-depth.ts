// The nesting bound that every JSON text from a client passes before JSON.parse: V8 takes
// milliseconds to parse tens of kilobytes of nested brackets, so a request body or a payload is
// refused before parsing when it nests deeper than its callers' bound.

/**
 * Whether brackets outside strings open more than `max` levels (the text need not be valid JSON).
 * A text with at most `max` opening brackets cannot nest deeper, wherever they are: counting them
 * (with indexOf, which the engine runs natively) settles the usual case, and only a text with more
 * is scanned character by character.
 */
export function nestsDeeper(text: string, max: number): boolean {
  if (openingBrackets(text, max) <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** How many '{' and '[' `text` holds, counted up to `max` + 1. */
function openingBrackets(text: string, max: number): number {
  let n = 0;
  for (let i = text.indexOf('{'); i !== -1 && n <= max; i = text.indexOf('{', i + 1)) n++;
  for (let i = text.indexOf('['); i !== -1 && n <= max; i = text.indexOf('[', i + 1)) n++;
  return n;
}
