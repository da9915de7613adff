import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** Latency buckets in seconds, from a cached read (1 ms) to a slow upload completion (10 s). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** How one store operation ended: its latency histogram and the quota counter are labelled by it. */
export type OperationOutcome = "ok" | "error";

/**
 * What the app counts, in its own prom-client registry (never the global one: a process may run
 * several servers, a test dozens). `GET /metrics` renders it (see `operator-routes.ts`).
 */
export interface AppMetrics {
  registry: Registry;
  /** One answered HTTP request: `route` is the matched pattern (`/threads/:jobId/:alias/items`), never the path. */
  request(labels: { method: string; route: string; status: number }, seconds: number): void;
  /** One store operation of one backend (`instrumentStore`). */
  storeOperation(
    labels: { store: string; backend: string; operation: string; outcome: OperationOutcome },
    seconds: number,
  ): void;
  /** A quota reservation: `reserved`, `refused` (the quota is full) or `error`. */
  quotaReservation(outcome: "reserved" | "refused" | "error"): void;
  /** A live stream (a thread's SSE, an MCP notification stream) opened; the returned function closes it, once. */
  streamOpened(): () => void;
  /** One run of a store's sweep (`stowage.sweep`): `ok` or `failed`. */
  sweepRun(store: string, outcome: "ok" | "failed", removed: number): void;
  /** Adds the process's own metrics (CPU, RSS, event-loop lag, GC pauses); once, when /metrics is served. */
  collectProcessMetrics(): void;
}

export function createAppMetrics(): AppMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: "stowage_http_requests_total",
    help: "HTTP requests answered, by method, matched route and status",
    labelNames: ["method", "route", "status"] as const,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: "stowage_http_request_duration_seconds",
    help: "Time to answer an HTTP request (to its headers for a stream), by method, matched route and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const storeSeconds = new Histogram({
    name: "stowage_store_operation_duration_seconds",
    help: "Latency of one operation of a store, by store, backend, operation and outcome",
    labelNames: ["store", "backend", "operation", "outcome"] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const reservations = new Counter({
    name: "stowage_quota_reservations_total",
    help: "Upload quota reservations, by outcome (reserved, refused: over quota, error)",
    labelNames: ["outcome"] as const,
    registers: [registry],
  });
  const streams = new Gauge({
    name: "stowage_sse_subscribers",
    help: "Live streams open now: thread event streams (SSE) and MCP notification streams",
    registers: [registry],
  });
  const sweeps = new Counter({
    name: "stowage_sweep_runs_total",
    help: "Runs of a store's sweep (expired session blobs, uploads past retention), by store and outcome",
    labelNames: ["store", "outcome"] as const,
    registers: [registry],
  });
  const swept = new Counter({
    name: "stowage_sweep_removed_total",
    help: "What the sweeps removed, by store",
    labelNames: ["store"] as const,
    registers: [registry],
  });
  let processMetrics = false;
  return {
    registry,
    request(labels, seconds) {
      const values = { ...labels, status: String(labels.status) };
      requests.inc(values);
      requestSeconds.observe(values, seconds);
    },
    storeOperation(labels, seconds) {
      storeSeconds.observe(labels, seconds);
    },
    quotaReservation: (outcome) => reservations.inc({ outcome }),
    streamOpened() {
      streams.inc();
      let open = true;
      return () => {
        if (!open) return;
        open = false;
        streams.dec();
      };
    },
    sweepRun(store, outcome, removed) {
      sweeps.inc({ store, outcome });
      if (removed > 0) swept.inc({ store }, removed);
    },
    collectProcessMetrics() {
      if (processMetrics) return;
      processMetrics = true;
      collectDefaultMetrics({ register: registry, prefix: "stowage_" });
    },
  };
}
