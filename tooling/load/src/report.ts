import type { OperationRow } from "./recorder.js";

const pad = (value: string, width: number, right = true) =>
  right ? value.padStart(width) : value.padEnd(width);

/** The table per operation: requests, req/s, p50/p95/p99 ms, errors. */
export function operationTable(rows: OperationRow[]): string[] {
  const width = Math.max(9, ...rows.map((row) => row.operation.length));
  const lines = [
    `${pad("operation", width, false)}  ${pad("requests", 8)}  ${pad("req/s", 8)}  ${pad("p50 ms", 8)}  ${pad("p95 ms", 8)}  ${pad("p99 ms", 8)}  ${pad("errors", 6)}`,
  ];
  for (const row of rows) {
    lines.push(
      `${pad(row.operation, width, false)}  ${pad(String(row.requests), 8)}  ${pad(row.perSecond.toFixed(1), 8)}  ${pad(row.p50Ms.toFixed(1), 8)}  ${pad(row.p95Ms.toFixed(1), 8)}  ${pad(row.p99Ms.toFixed(1), 8)}  ${pad(String(row.errors), 6)}`,
    );
  }
  for (const row of rows) {
    for (const sample of row.samples) lines.push(`  ${row.operation} failed: ${sample}`);
  }
  return lines;
}

/** Mean server-side latency per store operation, from the replicas' `/metrics` (sum / count of the histogram). */
export function storeOperationTable(metricsTexts: string[]): string[] {
  const sums = new Map<string, { sum: number; count: number }>();
  const line = /^stowage_store_operation_duration_seconds_(sum|count)\{([^}]*)\} ([0-9.e+-]+)$/;
  for (const text of metricsTexts) {
    for (const row of text.split("\n")) {
      const match = line.exec(row);
      if (!match) continue;
      const labels = Object.fromEntries([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
      const key = `${labels.store}/${labels.backend} ${labels.operation}${labels.outcome === "ok" ? "" : ` (${labels.outcome})`}`;
      const entry = sums.get(key) ?? { sum: 0, count: 0 };
      entry[match[1] as "sum" | "count"] += Number(match[3]);
      sums.set(key, entry);
    }
  }
  const rows = [...sums.entries()].filter(([, v]) => v.count > 0).sort((a, b) => b[1].sum - a[1].sum);
  const width = Math.max(20, ...rows.map(([key]) => key.length));
  return [
    `${pad("store operation (server side)", width, false)}  ${pad("count", 8)}  ${pad("mean ms", 8)}  ${pad("total s", 8)}`,
    ...rows.map(
      ([key, { sum, count }]) =>
        `${pad(key, width, false)}  ${pad(String(count), 8)}  ${pad(((sum / count) * 1000).toFixed(1), 8)}  ${pad(sum.toFixed(1), 8)}`,
    ),
  ];
}
