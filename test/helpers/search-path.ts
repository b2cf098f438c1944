/** PATH without any directory that holds one of `names` (e.g. rg, fd, fdfind): a machine without them. */
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

function holds(dir: string, name: string): boolean {
  try {
    accessSync(join(dir, name), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function pathWithout(names: readonly string[], path = process.env.PATH ?? ""): string {
  return path
    .split(delimiter)
    .filter((dir) => dir !== "" && !names.some((name) => holds(dir, name)))
    .join(delimiter);
}
