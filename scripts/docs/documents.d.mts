import type { DeclaredDocument } from "../../src/core/schema/documents.ts";

export function loadDocuments(root: string): Promise<readonly DeclaredDocument[]>;
export function renderDocuments(documents: readonly DeclaredDocument[]): string;
