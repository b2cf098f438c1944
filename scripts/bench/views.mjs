/**
 * Figure 6's measure: the bytes a view puts into the parent's context, as the model sees them (the
 * text of the tool result or custom message). A failure view's artifact paths are not counted
 * (the target is for the view itself; paths grow with the project's location).
 */

/**
 * Paths listed on the failure text's `Artifacts:` and `Output:` lines (docs/failure-codes.md, "How a
 * failure reads").
 */
export function listedPaths(text) {
  const paths = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("Artifacts: ")) paths.push(...line.slice("Artifacts: ".length).split(", "));
    else if (line.startsWith("Output: ")) paths.push(line.slice("Output: ".length));
  }
  return paths.filter((p) => p !== "");
}

export function failureViewBytes(text) {
  const pathBytes = listedPaths(text).reduce((sum, p) => sum + Buffer.byteLength(p), 0);
  return Buffer.byteLength(text) - pathBytes;
}

/** Collects the views the other figures meet on their way; figure 6 summarizes them. */
export function createViewCollector() {
  const views = { receipt: [], notification: [], running: [], failure: [] };
  return {
    views,
    receipt: (text) => views.receipt.push({ bytes: Buffer.byteLength(text), text }),
    notification: (text) => views.notification.push({ bytes: Buffer.byteLength(text), text }),
    running: (text) => views.running.push({ bytes: Buffer.byteLength(text), text }),
    failure: (text) =>
      views.failure.push({ bytes: failureViewBytes(text), total_bytes: Buffer.byteLength(text), text }),
  };
}
