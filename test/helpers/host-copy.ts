/**
 * Throwaway copies of an installed @earendil-works Pi host (default: 1.6.0, the newest) that claim
 * another version and, on request, lose one of the protections the guard relies on. For tests of
 * what bg_delegate and the guard do on a Pi they have not proven, or on one that misbehaves.
 *
 *   const copy = await makeHostCopy({ version: "1.99.0", patches: ["ignore-tool-call-block"] });
 *   execa(copy.nodePath, [copy.cliPath, "-p", ...]);  // pi "1.99.0" whose tool_call blocks do nothing
 *   await copy.remove();                              // else removed after the test file
 *
 * Layout (0.3-0.8 s on a busy 2-core machine): `<dir>/node_modules/` mirrors the node_modules the
 * host is installed in, one symlink per entry, except the host package itself, which is
 * `packageDir`: a real directory
 * with a real copy of `dist/` without its .map and .d.ts files (Node resolves symlinks to real paths,
 * so every module of the host must live in the copy, or its sibling imports would load the
 * installed original; copies, not hard links, so nothing can write through to the original), its own
 * package.json with `version` replaced, and symlinks for the rest (its nested node_modules, docs,
 * examples…). The host's dependencies (@earendil-works/pi-ai, pi-agent-core, pi-tui…) resolve
 * through the symlinks to the installed ones; none of them imports pi-coding-agent.
 *
 * The version: Pi reads it from its package.json at startup (dist/config.js and the bundle's copy of
 * it: `VERSION = pkg.version`), found by walking up from the module, so the copy's package.json is
 * all `--version`, the startup and an extension's `import { VERSION } from
 * "@mariozechner/pi-coding-agent"` see (Pi's loader aliases that name to the copy's dist/index.js, or
 * to the bundle's own modules under dist/bundle/cli.js). Nothing in dist embeds the host version;
 * the "1.6.0" literal in dist/bundle/chunks is PI_AI_VERSION, @earendil-works/pi-ai's own version
 * (its default User-Agent), left as it is. Do not set PI_PACKAGE_DIR for a copy: Pi would read that
 * directory's package.json instead.
 *
 * Patches are exact string replacements in both CLIs, dist/cli.js (unbundled; what the tests run)
 * and dist/bundle/cli.js (the `pi` bin); each must match exactly once or makeHostCopy throws, so a
 * Pi whose code moved fails loudly instead of running unpatched.
 * - "ignore-tool-call-block": ExtensionRunner.emitToolCall still runs every `tool_call` handler but
 *   returns their result with `block: false` (and no longer stops at the first block), so the agent
 *   loop's `beforeToolCall` check never blocks: the tool runs.
 * - "tools-unrestricted": createAgentSession no longer turns `tools` (`--tools`) into the allowlist
 *   (`allowedToolNames`). The named tools are still the initially active ones, but nothing is filtered
 *   out: every built-in is registered (inactive unless named) and every extension tool is registered
 *   and active, so the model is offered extension tools that `--tools` left out.
 * - "ignore-no-extensions": main() no longer passes `--no-extensions` to the resource loader, so the
 *   extensions in the agent dir (and a trusted project's) load as if the flag were not given.
 */
import type { Dirent } from "node:fs";
import { copyFile, mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { resolveHost } from "../../scripts/hosts.mjs";
import { makeTempDir, removeTempDir } from "./temp.ts";

/** The host whose dist the patches below were written against. */
export const HOST_COPY_SOURCE = "1.6.0";

export type HostPatch = "ignore-tool-call-block" | "tools-unrestricted" | "ignore-no-extensions";

export interface HostCopyOptions {
  /** The version the copy reports, e.g. "1.99.0". */
  version: string;
  patches?: readonly HostPatch[];
  /** The installed host to copy (a version of scripts/hosts.mjs); default HOST_COPY_SOURCE. */
  host?: string;
}

export interface HostCopy {
  /** The temp dir holding everything (removed by remove(), else after the test file). */
  dir: string;
  /** The copied package: `<dir>/node_modules/@earendil-works/pi-coding-agent`. */
  packageDir: string;
  /** `<packageDir>/dist/cli.js`, the unbundled CLI (the entry HOST.cliPath names for installed hosts). */
  cliPath: string;
  /** `<packageDir>/dist/bundle/cli.js`, the bundled CLI (the package's `pi` bin); patched the same way. */
  bundleCliPath: string;
  /** The Node the copied host runs on. */
  nodePath: string;
  /** The version the copy reports. */
  version: string;
  /** The installed host it was copied from. */
  sourceVersion: string;
  patches: readonly HostPatch[];
  remove(): Promise<void>;
}

interface Replacement {
  /** A file of the package, or a directory whose .js files (recursively) are searched. */
  where: string;
  find: string;
  replace: string;
}

const PATCHES: Record<HostPatch, readonly Replacement[]> = {
  "ignore-tool-call-block": [
    {
      where: "dist/core/extensions/runner.js",
      find: [
        "                if (handlerResult) {",
        "                    result = handlerResult;",
        "                    if (result.block) {",
        "                        return result;",
        "                    }",
        "                }",
      ].join("\n"),
      replace: [
        "                if (handlerResult) {",
        '                    // pi-bg-delegate test host copy, patch "ignore-tool-call-block": a block is dropped.',
        "                    result = { ...handlerResult, block: false };",
        "                }",
      ].join("\n"),
    },
    {
      where: "dist/bundle",
      find: "if(handlerResult&&(result=handlerResult,result.block))return result}return result}",
      replace: "if(handlerResult)result={...handlerResult,block:!1}}return result}",
    },
  ],
  "tools-unrestricted": [
    {
      where: "dist/core/sdk.js",
      find: '        : (options.tools ?? (options.noTools === "all" ? [] : undefined));',
      replace:
        '        : (options.noTools === "all" ? [] : undefined); // pi-bg-delegate test host copy, patch "tools-unrestricted"',
    },
    {
      where: "dist/bundle",
      find: ':options.tools??(options.noTools==="all"?[]:void 0),excludedToolNames=',
      replace: ':(options.noTools==="all"?[]:void 0),excludedToolNames=',
    },
  ],
  "ignore-no-extensions": [
    {
      where: "dist/main.js",
      find: "                noExtensions: parsed.noExtensions,",
      replace: '                noExtensions: false, // pi-bg-delegate test host copy, patch "ignore-no-extensions"',
    },
    { where: "dist/bundle", find: "noExtensions:parsed.noExtensions", replace: "noExtensions:!1" },
  ],
};

const VERSION_PATTERN = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

function occurrences(text: string, find: string): number {
  let count = 0;
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) count++;
  return count;
}

async function jsFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".js")).map((e) => join(e.parentPath, e.name));
}

/** Apply one replacement in the copy; throws unless `find` occurs exactly once in `where`. */
async function applyReplacement(packageDir: string, patch: HostPatch, r: Replacement): Promise<void> {
  const target = join(packageDir, r.where);
  const files = r.where.endsWith(".js") ? [target] : await jsFiles(target);
  const hits: { file: string; text: string }[] = [];
  let total = 0;
  for (const file of files) {
    const text = await readFile(file, "utf8");
    const n = occurrences(text, r.find);
    if (n > 0) hits.push({ file, text });
    total += n;
  }
  const hit = hits[0];
  if (total !== 1 || hit === undefined) {
    throw new Error(
      `host copy patch "${patch}": expected the text once in ${r.where}, found it ${total} times` +
        `${hits.length > 0 ? ` (${hits.map((h) => relative(packageDir, h.file)).join(", ")})` : ""}; ` +
        `Pi's code changed, update test/helpers/host-copy.ts. Text: ${JSON.stringify(r.find)}`,
    );
  }
  await writeFile(
    hit.file,
    hit.text.replace(r.find, () => r.replace),
  );
}

/** Split an installed package dir into its node_modules dir and its path inside it ("@scope/name" or "name"). */
function splitInstalled(packageDir: string): { modulesDir: string; parts: string[] } {
  const parts = packageDir.split(sep);
  const at = parts.lastIndexOf("node_modules");
  if (at === -1 || at === parts.length - 1) throw new Error(`${packageDir} is not inside a node_modules directory`);
  return { modulesDir: parts.slice(0, at + 1).join(sep) || sep, parts: parts.slice(at + 1) };
}

/**
 * Copy the tree `from` to `to` without source maps and declarations (not needed to run; leaving them
 * out, and copying files in parallel rather than with fs.cp, makes the copy 2-4x faster).
 */
export async function copyRuntimeFiles(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { recursive: true, withFileTypes: true });
  const target = (e: Dirent) => join(to, relative(from, join(e.parentPath, e.name)));
  await mkdir(to);
  // Sorted, a directory comes before the directories inside it.
  for (const dir of entries
    .filter((e) => e.isDirectory())
    .map(target)
    .sort())
    await mkdir(dir);
  const files = entries.filter((e) => e.isFile() && !e.name.endsWith(".map") && !e.name.endsWith(".d.ts"));
  await Promise.all(files.map((e) => copyFile(join(e.parentPath, e.name), target(e))));
}

/** Symlink every entry of `from` into `to` (created), except `except`. */
async function mirror(from: string, to: string, except: string): Promise<void> {
  await mkdir(to, { recursive: true });
  const entries = await readdir(from);
  await Promise.all(entries.filter((e) => e !== except).map((e) => symlink(join(from, e), join(to, e))));
}

/** A throwaway copy of an installed Pi host that reports `version`, with `patches` applied. */
export async function makeHostCopy(options: HostCopyOptions): Promise<HostCopy> {
  if (!VERSION_PATTERN.test(options.version)) throw new Error(`not a version: ${JSON.stringify(options.version)}`);
  const patches = [...new Set(options.patches ?? [])];
  for (const patch of patches) {
    if (!(patch in PATCHES)) throw new Error(`unknown host copy patch "${patch}"`);
  }
  const host = resolveHost(options.host ?? HOST_COPY_SOURCE);
  if (host.packageName !== "@earendil-works/pi-coding-agent") {
    throw new Error(`host copies are made of @earendil-works hosts; pi ${host.name} is ${host.packageName}`);
  }
  const dir = await makeTempDir(`host-copy-${options.version}`);
  try {
    const { modulesDir, parts } = splitInstalled(host.packageDir);
    // Mirror each level of the package's path inside node_modules ("@earendil-works", then the name).
    let from = modulesDir;
    let to = join(dir, "node_modules");
    for (const part of parts) {
      await mirror(from, to, part);
      from = join(from, part);
      to = join(to, part);
    }
    const packageDir = to;
    await mkdir(packageDir);
    const own = ["dist", "package.json"];
    const rest = (await readdir(host.packageDir)).filter((e) => !own.includes(e));
    await Promise.all([
      ...rest.map((e) => symlink(join(host.packageDir, e), join(packageDir, e))),
      copyRuntimeFiles(join(host.packageDir, "dist"), join(packageDir, "dist")),
      (async () => {
        const manifest = JSON.parse(await readFile(join(host.packageDir, "package.json"), "utf8"));
        manifest.version = options.version;
        await writeFile(join(packageDir, "package.json"), `${JSON.stringify(manifest, null, "\t")}\n`);
      })(),
    ]);
    for (const patch of patches) {
      for (const replacement of PATCHES[patch]) await applyReplacement(packageDir, patch, replacement);
    }
    return {
      dir,
      packageDir,
      cliPath: join(packageDir, "dist", "cli.js"),
      bundleCliPath: join(packageDir, "dist", "bundle", "cli.js"),
      nodePath: host.nodePath,
      version: options.version,
      sourceVersion: host.version,
      patches,
      remove: () => removeTempDir(dir),
    };
  } catch (error) {
    await removeTempDir(dir);
    throw error;
  }
}
