import { describe, expect, it } from "vitest";
import { globMatcher } from "../../src/child/glob.ts";

describe("globMatcher (fd's glob rules for the guard's find)", () => {
  const cases: [string, string, boolean][] = [
    ["*.md", "docs/guide.md", true],
    ["*.md", "guide.md", true],
    ["*.md", "docs/guide.mdx", false],
    ["*.ts", "a/b/c.ts", true],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/x/a.ts", false],
    ["src/*.ts", "lib/src/a.ts", false],
    ["src/**/*.ts", "src/x/y/a.ts", true],
    ["src/**/*.ts", "src/a.ts", true],
    ["**/*.json", "a/b.json", true],
    ["**/*.json", "b.json", true],
    ["file?.txt", "file1.txt", true],
    ["file?.txt", "file10.txt", false],
    ["*.{ts,js}", "x/y.js", true],
    ["*.{ts,js}", "x/y.mjs", false],
    ["[ab].txt", "a.txt", true],
    ["[!ab].txt", "a.txt", false],
    ["[!ab].txt", "c.txt", true],
    ["readme.md", "docs/README.md", true],
    ["README.md", "docs/readme.md", false],
    ["a+b(c).txt", "a+b(c).txt", true],
    // Three cases the hand-written matcher got wrong: nested alternatives, `]` first in a class, an escape.
    ["{a,{b,c}}.ts", "b.ts", true],
    ["{a,{b,c}}.ts", "c}.ts", false],
    ["[]a].ts", "].ts", true],
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    // Dotfiles match like any file; a class negates with ^ too.
    ["*.ts", ".hidden.ts", true],
    ["[^ab].txt", "c.txt", true],
  ];
  it.each(cases)("%s against %s → %s", (pattern, path, expected) => {
    expect(globMatcher(pattern)(path)).toBe(expected);
  });
});
