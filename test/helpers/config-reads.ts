// Where the code reads the configuration: every name accessed as a property (`config.PORT`,
// `cfg['PORT']`, `const { PORT } = config`) in the TypeScript sources under src/, outside the
// modules that load the configuration (src/config/ and the secrets resolver src/secrets.ts).
// Parsed with the TypeScript compiler, so comments, strings and types never count as reads.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** The modules that load the configuration: a read there is not a use. */
export const CONFIG_MODULES: readonly string[] = ['src/config/', 'src/secrets.ts'];

/** Property name → the files (relative to `root`) that read it, outside the configuration modules. */
export function propertyReads(root: string): Map<string, Set<string>> {
  const reads = new Map<string, Set<string>>();
  const note = (name: string, file: string) => {
    let files = reads.get(name);
    if (files === undefined) reads.set(name, files = new Set());
    files.add(file);
  };
  for (const path of tsFiles(join(root, 'src'))) {
    const file = relative(root, path).split('\\').join('/');
    if (CONFIG_MODULES.some((m) => file.startsWith(m))) continue;
    const source = ts.createSourceFile(file, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node)) note(node.name.text, file);
      else if (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)) note(node.argumentExpression.text, file);
      else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent)) {
        const key = node.propertyName ?? node.name;
        if (ts.isIdentifier(key) || ts.isStringLiteralLike(key)) note(key.text, file);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return reads;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}
