// The messages of the e-mail comparison. The SpamAssassin public corpus as the devDependency ships it
// (eval/lib/spam-assassin.ts), raw bytes, the mbox "From " separator line taken off so every filter
// sees an RFC 5322 message; the held-out half (split 'test': Palisade's text rules were tuned on
// the other half, eval/README.md). The 20 KB set: each of the first N held-out messages rewritten as
// a plain-text message of 20,480 bytes, its own headers kept and its body text (as the evaluation
// extracts it) repeated to fill, the size ALTCHA quotes (~15 ms per 20 KB e-mail).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { extractMessage } from '../../eval/lib/mime.js';
import { spamAssassinDir, splitOf, SPAM_ASSASSIN_GROUPS, type SpamAssassinGroup } from '../../eval/lib/spam-assassin.js';

export interface RawMessage {
  readonly id: string;
  readonly group: SpamAssassinGroup;
  readonly label: 'ham' | 'spam';
  readonly raw: Buffer;
}

export const SIZE_20KB = 20_480;

/** The held-out half ('test', what the bench reports) or the half rules may be fitted on ('tune'). */
export function loadCorpus(split: 'test' | 'tune' = 'test'): RawMessage[] {
  const dir = spamAssassinDir();
  const files = JSON.parse(readFileSync(join(dir, 'file_list.json'), 'utf8')) as string[];
  const out: RawMessage[] = [];
  for (const file of files) {
    const id = file.replace(/\.txt$/, '');
    if (splitOf(id) !== split) continue;
    const group = id.slice(0, id.indexOf('/')) as SpamAssassinGroup;
    if (!SPAM_ASSASSIN_GROUPS.includes(group)) throw new Error(`unknown SpamAssassin group in ${file}`);
    let raw = readFileSync(join(dir, file));
    if (raw.subarray(0, 5).toString('latin1') === 'From ') raw = raw.subarray(raw.indexOf(10) + 1);
    out.push({ id, group, label: group.startsWith('spam') ? 'spam' : 'ham', raw });
  }
  return out;
}

/** `count` messages of exactly SIZE_20KB bytes, alternating ham and spam. */
export function twentyKbMessages(corpus: readonly RawMessage[], count: number): RawMessage[] {
  const ham = corpus.filter((m) => m.label === 'ham');
  const spam = corpus.filter((m) => m.label === 'spam');
  const out: RawMessage[] = [];
  for (let i = 0; out.length < count && (i < ham.length || i < spam.length); i++) {
    for (const m of [ham[i], spam[i]]) {
      if (m === undefined || out.length === count) continue;
      const text = m.raw.toString('latin1');
      const { body } = extractMessage(text);
      if (body.trim().length < 200) continue;
      const blank = /\r?\n\r?\n/.exec(text);
      const headers = (blank === null ? text : text.slice(0, blank.index))
        .split(/\r?\n(?![ \t])/)
        .filter((h) => !/^(content-type|content-transfer-encoding|mime-version|content-length|lines)\s*:/i.test(h))
        .join('\r\n');
      const head = `${headers}\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n`;
      const bytes = Buffer.from(head);
      const fill = Buffer.from(`${body}\r\n\r\n`);
      const raw = Buffer.alloc(SIZE_20KB, 0x20);
      bytes.copy(raw, 0, 0, Math.min(bytes.length, SIZE_20KB));
      for (let at = bytes.length; at < SIZE_20KB; at += fill.length) fill.copy(raw, at, 0, Math.min(fill.length, SIZE_20KB - at));
      // Whatever multi-byte character the cut split, the message stays 20,480 bytes: the filters read bytes.
      out.push({ id: `${m.id}@20kb`, group: m.group, label: m.label, raw });
    }
  }
  return out;
}
