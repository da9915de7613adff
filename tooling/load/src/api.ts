import { Agent, Pool, request } from "undici";
import type { Recorder } from "./recorder.js";

/** Answers slower than this are failures: a stall, not a figure. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface CallOptions {
  key?: string;
  json?: unknown;
  body?: Uint8Array;
  headers?: Record<string, string>;
  /** Statuses that count as answered as expected (default: any 2xx). */
  expect?: readonly number[];
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  json<T = Record<string, unknown>>(): T;
}

/**
 * The client side of the run: one bounded pool of connections per origin (each replica, the S3
 * endpoint), every request timed into the recorder under its operation's name. A request that
 * fails (transport error, unexpected status) is counted and answered `undefined`.
 */
export class Api {
  readonly #pools = new Map<string, Pool>();
  readonly #connections: number;
  /** Where requests are timed now: setup, the measured run and the read-back each have their own. */
  recorder: Recorder;

  constructor(recorder: Recorder, connections: number) {
    this.recorder = recorder;
    this.#connections = connections;
  }

  async call(
    operation: string,
    url: string,
    method: string,
    options: CallOptions = {},
  ): Promise<Answer | undefined> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | Uint8Array | undefined = options.body;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    }
    const started = performance.now();
    try {
      const response = await request(url, {
        method: method as "GET",
        headers,
        body,
        dispatcher: this.#pool(new URL(url).origin),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const bytes = Buffer.from(await response.body.arrayBuffer());
      const ms = performance.now() - started;
      const expected = options.expect
        ? options.expect.includes(response.statusCode)
        : response.statusCode < 300;
      if (!expected) {
        this.recorder.error(operation, ms, `${response.statusCode} ${codeOf(bytes)}`);
        return undefined;
      }
      this.recorder.ok(operation, ms);
      return {
        status: response.statusCode,
        headers: response.headers,
        body: bytes,
        json: <T>() => JSON.parse(bytes.toString("utf8")) as T,
      };
    } catch (err) {
      const code = (err as { code?: string }).code ?? (err as Error).name;
      this.recorder.error(operation, performance.now() - started, `transport ${code}`);
      return undefined;
    }
  }

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: this.#connections,
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS,
      });
      this.#pools.set(origin, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
  }
}

/** The error code of a body in core's wire format, or `-`. */
function codeOf(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { code?: string; reason?: string };
    return [parsed.code, parsed.reason].filter(Boolean).join("/") || "-";
  } catch {
    return "-";
  }
}

/** The dispatcher of live streams: one connection each, held for the whole run, no pool bound. */
export function streamDispatcher(): Agent {
  return new Agent({ headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: 0 });
}
