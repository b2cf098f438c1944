/**
 * fd-style glob matching for the guard's find (src/child/find-tool.ts): `*` and `?` stay within one
 * path segment, `**` crosses segments, `[...]` is a class, `{a,b}` alternatives. A pattern without `/`
 * matches a file's name at any depth; one with `/` matches the path from the search root. An
 * all-lowercase pattern matches case-insensitively (fd's smart case).
 */
function escapeChar(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}

function translate(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === "*") {
      if (pattern[i + 1] === "*") {
        // "**/" matches zero or more whole segments; a trailing "**" matches the rest.
        const slash = pattern[i + 2] === "/";
        out += slash ? "(?:.*/)?" : ".*";
        i += slash ? 2 : 1;
      } else out += "[^/]*";
    } else if (c === "?") out += "[^/]";
    else if (c === "[") {
      const end = pattern.indexOf("]", i + 2);
      if (end === -1) out += "\\[";
      else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, "^")
          .replace(/\\/g, "\\\\");
        out += `[${body}]`;
        i = end;
      }
    } else if (c === "{") {
      const end = pattern.indexOf("}", i);
      if (end === -1) out += "\\{";
      else {
        out += `(?:${pattern
          .slice(i + 1, end)
          .split(",")
          .map((alt) => translate(alt))
          .join("|")})`;
        i = end;
      }
    } else out += escapeChar(c);
  }
  return out;
}

/** A matcher for paths relative to the search root, with `/` separators. */
export function globMatcher(pattern: string): (relativePath: string) => boolean {
  const flags = pattern === pattern.toLowerCase() ? "i" : "";
  const re = new RegExp(`^${translate(pattern)}$`, flags);
  if (!pattern.includes("/")) return (path) => re.test(path.slice(path.lastIndexOf("/") + 1));
  return (path) => re.test(path);
}
