/**
 * A throwaway copy of an installed Pi host together with every Pi package of its scope
 * (pi-agent-core, pi-ai, pi-tui, …): for tests of what binds a self-proof record to the code that
 * runs the child's loop. Unlike test/helpers/host-copy.ts, which copies the CLI's package only and
 * links its dependencies, here each `<scope>/pi-*` package is a real copy (dist and all, without
 * source maps and declarations; a nested node_modules stays a link to the installed one), so a test
 * can change one file of pi-agent-core or pi-ai without touching the installed host. Every other
 * entry of node_modules is a link. The CLI's package.json may claim another version. Only for a host
 * installed under its own name (0.73.1, the newest 1.x), not an npm alias (`pi-host-<version>`).
 *
 *   const build = await copyHostBuild({ host: "0.73.1", version: "0.99.0" });
 *   await build.patch("pi-agent-core", "dist/agent-loop.js", "if (beforeResult?.block) {", "if (false) {");
 */
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { resolveHost } from "../../scripts/hosts.mjs";
import { copyRuntimeFiles } from "./host-copy.ts";
import { makeTempDir, removeTempDir } from "./temp.ts";

export interface HostBuildCopy {
  dir: string;
  /** The copied CLI: `<dir>/node_modules/<scope>/pi-coding-agent/dist/cli.js`. */
  cliPath: string;
  nodePath: string;
  version: string;
  /** The copied Pi packages' names within the scope, e.g. "pi-agent-core". */
  piPackages: string[];
  /** Replace `find` (must occur exactly once) in a file of a copied Pi package. */
  patch(piPackage: string, file: string, find: string, replace: string): Promise<void>;
  remove(): Promise<void>;
}

async function copyPackage(from: string, to: string): Promise<void> {
  const entries = await readdir(from);
  await mkdir(to);
  await copyRuntimeFiles(join(from, "dist"), join(to, "dist"));
  await Promise.all(
    entries
      .filter((e) => e !== "dist")
      .map(async (e) =>
        e === "package.json" || e === "README.md"
          ? writeFile(join(to, e), await readFile(join(from, e)))
          : symlink(join(from, e), join(to, e)),
      ),
  );
}

export async function copyHostBuild(options: { host: string; version?: string }): Promise<HostBuildCopy> {
  const host = resolveHost(options.host);
  const parts = host.packageDir.split(sep);
  const at = parts.lastIndexOf("node_modules");
  const modules = parts.slice(0, at + 1).join(sep);
  const scope = host.packageName.split("/")[0] as string;
  if (!host.packageDir.endsWith(join(scope, "pi-coding-agent"))) {
    throw new Error(
      `pi ${options.host} is installed under an alias (${host.packageDir}): its Pi packages are not beside it`,
    );
  }
  const dir = await makeTempDir(`host-build-${options.host}`);
  try {
    const to = join(dir, "node_modules");
    const top = await readdir(modules);
    await mkdir(join(to, scope), { recursive: true });
    await Promise.all(top.filter((e) => e !== scope).map((e) => symlink(join(modules, e), join(to, e))));
    const scoped = await readdir(join(modules, scope));
    const piPackages = scoped.filter((e) => e.startsWith("pi-"));
    await Promise.all(
      scoped.map(async (e) => {
        const from = join(modules, scope, e);
        if (!piPackages.includes(e)) return symlink(from, join(to, scope, e));
        return copyPackage(from, join(to, scope, e));
      }),
    );
    const packageDir = join(to, scope, "pi-coding-agent");
    const version = options.version ?? host.version;
    const manifestPath = join(packageDir, "package.json");
    const manifest = JSON.parse(await readFile(manifestPath, "utf8"));
    manifest.version = version;
    await writeFile(manifestPath, `${JSON.stringify(manifest, null, "\t")}\n`);
    return {
      dir,
      cliPath: join(packageDir, "dist", "cli.js"),
      nodePath: host.nodePath,
      version,
      piPackages,
      async patch(piPackage, file, find, replace) {
        const path = join(to, scope, piPackage, file);
        const text = await readFile(path, "utf8");
        const hits = text.split(find).length - 1;
        if (hits !== 1) throw new Error(`patch of ${piPackage}/${file}: found the text ${hits} times`);
        await writeFile(
          path,
          text.replace(find, () => replace),
        );
      },
      remove: () => removeTempDir(dir),
    };
  } catch (error) {
    await removeTempDir(dir);
    throw error;
  }
}
