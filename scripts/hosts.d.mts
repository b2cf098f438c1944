export interface HostSpec {
  name: string;
  packageName: string;
  minNode: string;
  node: "npm" | "registry";
  packageDir: string;
  tests: "all" | "real-pi" | "subset";
}
export interface ResolvedHost extends HostSpec {
  version: string;
  cliPath: string;
  sdkUrl: string;
  nodePath: string;
  nodeVersion: string | undefined;
  pathEnv(path?: string): string;
}
export const REPO_ROOT: string;
export const HOST_ENV: string;
export const EXTRA_HOST_ENV: string;
export const HOST_VERSIONS: readonly [string, ...string[]];
export const SUBSET_TESTS: readonly string[];
export function compareVersions(a: string, b: string): -1 | 0 | 1;
export function hostDependency(name: string): [string, string];
export function hosts(): HostSpec[];
export function hostNames(): string[];
export function testInclude(name: string): string[];
export function resolveHost(name?: string): ResolvedHost;
export function packageOnlyPiArgs(packageDir?: string): string[];
export function createHostRegistry<Registry>(
  sdk: object,
  host: ResolvedHost,
  agentDir: string,
  modelsPath: string | null,
): Promise<{ modelRegistry: Registry; sessionOptions: Record<string, unknown> }>;
