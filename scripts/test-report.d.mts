export interface ReportCounts {
  passed: number;
  failed: number;
  skipped: number;
  total: number;
  failedFiles: string[];
  brokenFiles: { name: string; message: string }[];
}

export function countReport(report: {
  testResults: { name: string; status: string; message?: string; assertionResults: { status: string }[] }[];
}): ReportCounts;
