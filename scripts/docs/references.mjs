/**
 * Checked references (docs/INDEX.md, "Checked references"): a source comment that cites a docs
 * heading — a page path, a comma and the heading in double quotes, or several pages joined by
 * "and" before one heading — and a markdown link with a fragment (`[x](launch.md#the-spend-cap)`)
 * must name a page and a heading that exist.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";

/** Folders whose files may cite docs headings. */
const SOURCE_DIRS = ["src", "scripts", "test", "bin"];
const SOURCE_FILE = /\.(?:ts|mts|mjs|js)$/;

function toPosix(path) {
  return path.split(sep).join("/");
}

/** Heading texts of a markdown page, outside code fences, without the leading #s. */
export function headingsOf(text) {
  const headings = [];
  let fence = false;
  for (const line of text.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    else if (!fence) {
      const match = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
      if (match) headings.push(match[1]);
    }
  }
  return headings;
}

/** A heading or a cited name as compared: no backticks, one space between words, lower case. */
function plain(text) {
  return text.replaceAll("`", "").replace(/\s+/g, " ").trim().toLowerCase();
}

/** A heading without its number ("11. Views at 1,000 trees" → "Views at 1,000 trees"). */
const unnumbered = (heading) => heading.replace(/^\d+[a-z]?\.\s+/, "");

/**
 * Whether a cited name names a heading: the same words, or the heading's first words when the
 * rest is a command's arguments or an aside in parentheses (`"prune"` names "`prune
 * [--older-than <days>] …`", "Non-interactive Pi" names "Non-interactive Pi (`pi -p` …)"), a
 * numbered heading's number left off ("Views at 1,000 trees" names "11. Views at 1,000 trees (…)").
 */
export function namesHeading(headings, cited) {
  const want = plain(cited);
  return headings.some((heading) => {
    const have = plain(unnumbered(heading));
    return have === want || (have.startsWith(`${want} `) && /^[[<(-]/.test(have.slice(want.length + 1)));
  });
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading) {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor of a page, with GitHub's -1, -2 … for repeated headings. */
export function anchorsOf(text) {
  const seen = new Map();
  const anchors = new Set();
  for (const heading of headingsOf(text)) {
    const base = anchorOf(heading);
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  return anchors;
}

// Between the parts of a citation a comment may break its line: whitespace, `*` and `//`.
const GAP = String.raw`(?:\s|\*|//)*`;
const PAGE = String.raw`docs/[\w./-]+?\.md`;
const CITATION = new RegExp(`(${PAGE}(?:${GAP}(?:,|and|or)${GAP}${PAGE})*)${GAP},${GAP}"([^"]{1,200})"`, "g");

/** Whether the text before a match, on its line, is inside a comment: the line is one, or has opened one. */
function inComment(lineBefore) {
  return /^\s*(?:\*|\/\*|\/\/)/.test(lineBefore) || /\/\/|\/\*/.test(lineBefore);
}

/**
 * The docs headings a source file's comments cite: each with its line, the pages named and the
 * heading (line breaks and comment markers inside it collapsed). Code and string literals that
 * merely contain such text are not citations.
 */
export function citationsIn(source) {
  const out = [];
  for (const match of source.matchAll(CITATION)) {
    const lineStart = source.lastIndexOf("\n", match.index) + 1;
    if (!inComment(source.slice(lineStart, match.index))) continue;
    const pages = match[1].match(new RegExp(PAGE, "g")) ?? [];
    const heading = match[2].replace(/\n\s*(?:\*|\/\/)?\s*/g, " ");
    const line = source.slice(0, match.index).split("\n").length;
    out.push({ line, pages, heading });
  }
  return out;
}

function sourceFiles(root) {
  const files = [];
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && SOURCE_FILE.test(entry.name)) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) walk(join(root, dir));
  return files.sort();
}

/** Markdown link targets with a fragment: `[x](page.md#anchor)` and `[x](#anchor)`. */
function fragmentLinks(text) {
  const out = [];
  for (const match of text.matchAll(/\]\(([^)\s]*)#([^)\s]+)\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(match[1])) continue;
    out.push({ target: match[1], anchor: match[2], line: text.slice(0, match.index).split("\n").length });
  }
  return out;
}

/**
 * @param {string} root package root
 * @param {Map<string, string>} pages docs page path (absolute) → text
 * @returns {string[]} problems: each a cited heading or linked anchor that does not exist
 */
export function checkReferences(root, pages) {
  const problems = [];
  const read = (file) => pages.get(file) ?? (existsSync(file) ? readFileSync(file, "utf8") : undefined);
  for (const file of sourceFiles(root)) {
    const name = toPosix(relative(root, file));
    for (const { line, pages: cited, heading } of citationsIn(readFileSync(file, "utf8"))) {
      for (const page of cited) {
        const text = read(join(root, page));
        if (text === undefined) problems.push(`${name}:${line}: cites ${page}, which does not exist`);
        else if (!namesHeading(headingsOf(text), heading))
          problems.push(`${name}:${line}: cites ${page}, "${heading}": no such heading`);
      }
    }
  }
  const markdown = new Map(pages);
  const readme = join(root, "README.md");
  if (existsSync(readme)) markdown.set(readme, readFileSync(readme, "utf8"));
  for (const [file, text] of markdown) {
    const name = toPosix(relative(root, file));
    for (const { target, anchor, line } of fragmentLinks(text)) {
      const page = target === "" ? file : normalize(join(dirname(file), target));
      if (!page.endsWith(".md")) continue;
      const pageText = read(page);
      if (pageText === undefined) continue; // lintDocs names a missing link target
      if (!anchorsOf(pageText).has(decodeURIComponent(anchor)))
        problems.push(`${name}:${line}: links to ${target || "this page"}#${anchor}: no such heading`);
    }
  }
  return problems;
}
