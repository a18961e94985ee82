// Operator schema text, as libtorch registers it (`aten::add.Tensor(Tensor self, Tensor other, *,
// Scalar alpha=1) -> Tensor`), split into its parts. Shared by the wrapper generator
// (scripts/gen-ops.mjs, through dist/) and the start-up schema check, so both read schemas alike.

/** Splits at the commas that are not inside parentheses or brackets. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(' || ch === '[') depth++;
    if (ch === ')' || ch === ']') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

/** A type without its alias annotation (`Tensor(a!)` -> `Tensor`); alias sets do not change a call. */
export function stripAlias(type: string): string {
  return type.replace(/\([a-z][^)]*\)/g, '').trim();
}

export interface SchemaParts {
  /** The qualified name with its overload (`aten::add.Tensor`). */
  name: string;
  /** Arguments in order (the keyword-only marker `*` left out), types without alias annotations. */
  args: { name: string; type: string; hasDefault: boolean }[];
  /** The return declaration as written (`Tensor`, `(Tensor, Tensor)`, `()`). */
  ret: string;
  /** The return types, without alias annotations or names (empty for `()`). */
  returns: string[];
}

export function schemaParts(schema: string): SchemaParts {
  const open = schema.indexOf('(');
  if (open < 0) throw new Error(`not an operator schema: ${schema}`);
  let depth = 0;
  let close = -1;
  for (let i = open; i < schema.length; i++) {
    if (schema[i] === '(') depth++;
    if (schema[i] === ')' && --depth === 0) {
      close = i;
      break;
    }
  }
  const args: SchemaParts['args'] = [];
  for (const part of splitTopLevel(schema.slice(open + 1, close))) {
    if (part === '*') continue;
    const eq = part.indexOf('=');
    const decl = eq >= 0 ? part.slice(0, eq) : part;
    const space = decl.lastIndexOf(' ');
    args.push({
      name: decl.slice(space + 1).trim(),
      type: stripAlias(decl.slice(0, space)),
      hasDefault: eq >= 0,
    });
  }
  const ret = schema.slice(schema.indexOf('->', close) + 2).trim();
  const declared = ret === '()' ? [] : ret.startsWith('(') ? splitTopLevel(ret.slice(1, -1)) : [ret];
  return {
    name: schema.slice(0, open),
    args,
    ret,
    returns: declared.map((r) => stripAlias(r).split(' ')[0]!),
  };
}
