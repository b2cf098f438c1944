export interface HostSpec {
  name: string;
  packageName: string;
  minNode: string;
  node: "npm" | "registry";
  packageDir?: string;
}
export interface ResolvedHost extends HostSpec {
  version: string;
  packageDir: string;
  cliPath: string;
  sdkUrl: string;
  nodePath: string;
  nodeVersion: string | undefined;
  pathEnv(path?: string): string;
}
export const REPO_ROOT: string;
export const HOSTS: readonly HostSpec[];
export const HOST_ENV: string;
export const EXTRA_HOST_ENV: string;
export function hostNames(): string[];
export function resolveHost(name?: string): ResolvedHost;
export function packageOnlyPiArgs(packageDir?: string): string[];
export function createHostRegistry<Registry>(
  sdk: object,
  host: ResolvedHost,
  agentDir: string,
  modelsPath: string | null,
): Promise<{ modelRegistry: Registry; sessionOptions: Record<string, unknown> }>;
