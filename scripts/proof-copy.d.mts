export const PROOF_COPY_ENTRIES: readonly string[];
export function isProvableVersion(version: unknown): version is string;
export function prepareProofCopy(
  version: string,
  packageDir: string,
  options?: { root?: string },
): { dir: string; env: Record<string, string>; remove: () => void };
