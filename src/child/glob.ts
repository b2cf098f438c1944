/**
 * fd-style glob matching for the guard's find (src/child/find-tool.ts), by picomatch: `*` and `?`
 * stay within one path segment, `**` crosses segments, `[...]` is a class (`[!a]` and `[^a]` negate,
 * `]` first is a member), `{a,b}` alternatives nest, `\` escapes, and dotfiles match like any file.
 * A pattern without `/` matches a file's name at any depth; one with `/` matches the path from the
 * search root. An all-lowercase pattern matches case-insensitively (fd's smart case).
 */
import { createRequire } from "node:module";

interface PicomatchOptions {
  dot: boolean;
  posix: boolean;
  nocase: boolean;
  basename: boolean;
}
type Picomatch = (glob: string, options: PicomatchOptions) => (path: string) => boolean;

/** picomatch is CommonJS without types: loaded as what it is, typed by what is used here. */
const picomatch = createRequire(import.meta.url)("picomatch") as Picomatch;

/** A matcher for paths relative to the search root, with `/` separators. */
export function globMatcher(pattern: string): (relativePath: string) => boolean {
  return picomatch(pattern, {
    dot: true,
    // POSIX classes and `[!…]` negation, as fd's glob reads them.
    posix: true,
    nocase: pattern === pattern.toLowerCase(),
    basename: !pattern.includes("/"),
  });
}
