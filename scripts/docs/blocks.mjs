/**
 * Generated blocks inside hand-written markdown:
 *   <!-- pi-docs:begin name="<name>" generator="scripts/docs/generate.mjs" -->
 *   …generated body…
 *   <!-- pi-docs:end name="<name>" -->
 * Only the bytes between the two markers are ever rewritten; everything outside stays as written.
 */

export const GENERATOR = "scripts/docs/generate.mjs";

const MARKER = /<!-- pi-docs:(begin|end) name="([^"]*)"(?: generator="([^"]*)")? -->/g;

export function beginMarker(name) {
  return `<!-- pi-docs:begin name="${name}" generator="${GENERATOR}" -->`;
}

export function endMarker(name) {
  return `<!-- pi-docs:end name="${name}" -->`;
}

/**
 * The blocks of one file, in order. Throws on a malformed layout: nesting, a stray or unmatched
 * marker, a begin without the generator attribute, or a name used twice.
 * @returns {Array<{name: string, start: number, end: number}>} start/end delimit the body.
 */
export function parseBlocks(text, file) {
  const blocks = [];
  let open;
  for (const match of text.matchAll(MARKER)) {
    const [marker, kind, name, generator] = match;
    const where = `${file}:${text.slice(0, match.index).split("\n").length}`;
    if (kind === "begin") {
      if (open) throw new Error(`${where}: block "${name}" begins inside block "${open.name}"`);
      if (generator !== GENERATOR) {
        throw new Error(`${where}: block "${name}" must name generator="${GENERATOR}"`);
      }
      open = { name, start: match.index + marker.length };
    } else {
      if (generator !== undefined) throw new Error(`${where}: end marker of "${name}" takes no generator`);
      if (!open || open.name !== name) throw new Error(`${where}: end of block "${name}" without its begin`);
      blocks.push({ name, start: open.start, end: match.index });
      open = undefined;
    }
  }
  if (open) throw new Error(`${file}: block "${open.name}" has no end marker`);
  const seen = new Set();
  for (const block of blocks) {
    if (seen.has(block.name)) throw new Error(`${file}: block "${block.name}" appears twice`);
    seen.add(block.name);
  }
  return blocks;
}

/** The stored body of a block exactly as the generator writes it: one newline each side. */
export function wrapBody(body) {
  return `\n${body}\n`;
}

/** Replace the bodies of the given blocks; text outside the markers is untouched. */
export function spliceBlocks(text, blocks, bodies) {
  let out = "";
  let cursor = 0;
  for (const block of blocks) {
    if (!bodies.has(block.name)) continue;
    out += text.slice(cursor, block.start) + wrapBody(bodies.get(block.name));
    cursor = block.end;
  }
  return out + text.slice(cursor);
}

/**
 * Place a missing block after the page's first level-1 heading (or at its end when there is
 * none), so `docs:generate` can repair a page that lost its block.
 */
export function insertBlock(text, name, body) {
  const block = `${beginMarker(name)}${wrapBody(body)}${endMarker(name)}\n`;
  const heading = /^# .*\n/m.exec(text);
  if (!heading) return `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}\n${block}`;
  const at = heading.index + heading[0].length;
  return `${text.slice(0, at)}\n${block}${text.slice(at)}`;
}
