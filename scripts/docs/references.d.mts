export function headingsOf(text: string): string[];
export function namesHeading(headings: string[], cited: string): boolean;
export function anchorOf(heading: string): string;
export function anchorsOf(text: string): Set<string>;
export function citationsIn(source: string): { line: number; pages: string[]; heading: string }[];
export function checkReferences(root: string, pages: Map<string, string>): string[];
