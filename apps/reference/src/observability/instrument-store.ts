import { context, SpanKind } from "@opentelemetry/api";
import { StowageError } from "@stowage/core";
import type { AppMetrics } from "./metrics.js";
import { activeSessionId, endWithError, sessionAttributes, tracer } from "./tracing.js";

export interface InstrumentStoreOptions {
  /** Which store of the deployment: `shared`, `uploads`, `quota`, `session_blobs`. */
  store: string;
  /** What it runs on: `s3`, `postgres`, `pglite`, `fs`. */
  backend: string;
  metrics: AppMetrics;
}

/**
 * A copy of `target` with every method that returns a promise measured (a latency observation per
 * store, backend, operation and outcome) and traced (a span `<store> <operation>`, the child of the
 * request's span, with the request's `session.id` and `gen_ai.conversation.id`). Methods that
 * answer at once (`uriFor`) give their answer untouched, other properties are read from the target
 * (getters included), and every method runs on the target itself: this works for any of the app's
 * stores (ObjectStore, QuotaLedger, SessionBlobRepository; frozen objects and class instances
 * alike) without knowing their methods.
 */
export function instrumentStore<T extends object>(target: T, options: InstrumentStoreOptions): T {
  const copy: Record<PropertyKey, unknown> = {};
  for (
    let level: object | null = target;
    level && level !== Object.prototype;
    level = Object.getPrototypeOf(level)
  ) {
    for (const key of Reflect.ownKeys(level)) {
      if (key === "constructor" || Object.hasOwn(copy, key)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(level, key)!;
      const value = descriptor.value as unknown;
      if (typeof value === "function") {
        const method = value as (...args: unknown[]) => unknown;
        copy[key] =
          typeof key === "string"
            ? measured(target, key, method, options)
            : (...args: unknown[]) => method.apply(target, args);
      } else if ("value" in descriptor) {
        copy[key] = value;
      } else {
        Object.defineProperty(copy, key, {
          enumerable: descriptor.enumerable ?? false,
          get: () => Reflect.get(target, key),
        });
      }
    }
  }
  return Object.freeze(copy) as T;
}

function measured(
  object: object,
  operation: string,
  method: (...args: unknown[]) => unknown,
  { store, backend, metrics }: InstrumentStoreOptions,
) {
  return (...args: unknown[]): unknown => {
    const started = performance.now();
    const startTime = Date.now();
    const result = method.apply(object, args);
    if (!isPromise(result)) return result;
    const span = tracer().startSpan(
      `${store} ${operation}`,
      {
        kind: SpanKind.CLIENT,
        startTime,
        attributes: {
          "stowage.store": store,
          "stowage.backend": backend,
          "stowage.operation": operation,
          ...sessionAttributes(activeSessionId()),
        },
      },
      context.active(),
    );
    const observe = (outcome: "ok" | "error") =>
      metrics.storeOperation({ store, backend, operation, outcome }, (performance.now() - started) / 1000);
    return result.then(
      (value) => {
        observe("ok");
        if (store === "quota" && operation === "reserve") metrics.quotaReservation("reserved");
        span.end();
        return value;
      },
      (err: unknown) => {
        observe("error");
        if (store === "quota" && operation === "reserve") {
          metrics.quotaReservation(StowageError.is(err, "QUOTA_EXCEEDED") ? "refused" : "error");
        }
        endWithError(span, err);
        throw err;
      },
    );
  };
}

function isPromise(value: unknown): value is Promise<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
