export async function pruneCommand(): Promise<number> {
  return 0;
}
