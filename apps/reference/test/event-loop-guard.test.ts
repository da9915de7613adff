import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { spawnChild, waitingForCoreMs } from "@stowage/test-support";
import { Agent, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

// Issue 36, item 2: one request must not hold the server's event loop. While each hostile request
// below runs, the server (in the child) never spends more than LOOP_HOLD_BOUND_MS of CPU between two
// turns of its loop, nor as long off the CPU in a synchronous wait, and /healthz (polled from this
// process) answers within HEALTHZ_BOUND_MS. The holds are measured in the server's main-thread
// times, which a busy machine does not stretch. The /healthz bound is wall time, a fifth of the
// 5.5 s stall the issue saw, plus what the machine provably added: the time the server's and this
// process's threads waited for a core (Linux's schedstat) during the watched request. Without that
// allowance, the CI's test stage (every package at once on two cores) stretched answers of a server
// whose loop was free to 1.8-2.1 s.

/**
 * The most CPU time the server may spend without a turn of its loop while a hostile request runs:
 * 200 ms, or three times what decoding and parsing a 14 MiB body costs the machine (`parseMs`,
 * measured by the server as it starts), whichever is more. A request may hold the loop for a few
 * whole-body steps that cannot be sliced (decode, parse, serialize: each one pass over the body),
 * never for work that grows faster than its body. The 200 ms were chosen on a machine where such a
 * parse took about 60 ms; on a 2.1 GHz EPYC core it takes 110-180 ms, and the 14 MiB thread items
 * held the loop 200-255 ms there, the same code that held it 59-97 ms on the first.
 */
const LOOP_HOLD_BOUND_MS = 200;
const PARSES_PER_HOLD = 3;
/** The longest a /healthz answer may take while a hostile request runs. */
const HEALTHZ_BOUND_MS = 1_000;
/** Pause between two /healthz probes. */
const PROBE_INTERVAL_MS = 20;
/** How long the child may take to start. */
const START_TIMEOUT_MS = 60_000;
/** The hostile JSON bodies' size: under the general 16 MiB limit, as the issue sent them. */
const HOSTILE_JSON_BYTES = 15 * 1024 * 1024;
/** An oversized body: over the general 16 MiB limit. */
const OVERSIZED_BYTES = 17 * 1024 * 1024;

type Body = NonNullable<RequestInit["body"]>;

/** How the server's loop fared since the last look (ms). */
interface ServerHolds {
  /** The longest hold of the loop in the main thread's CPU time. */
  loopDelayMaxMs: number;
  /** The longest hold of the loop off the CPU, not waiting for a core (a synchronous wait). */
  blockedMaxMs: number;
  /** How long the server's threads waited for a core in all. */
  waitedForCoresMs: number;
}

interface GuardedServer {
  url: string;
  key: string;
  /** What decoding and parsing a 14 MiB JSON body costs the server's main thread (CPU ms). */
  parseMs: number;
  /** How the server's loop fared since the last call (the first call starts measuring). */
  holds(): Promise<ServerHolds>;
  stop(): Promise<void>;
}

async function startGuardedServer(dataDir: string): Promise<GuardedServer> {
  const child: ChildProcess = spawnChild(new URL("./children/serve-measuring-loop.ts", import.meta.url), [
    dataDir,
  ]);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const lines: string[] = [];
  let waiting: (() => void) | undefined;
  let partial = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    partial += chunk;
    const complete = partial.split("\n");
    partial = complete.pop()!;
    lines.push(...complete.filter((line) => line.startsWith("{")));
    waiting?.();
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) =>
    child.once("exit", (code, signal) => {
      // A server that dies under a hostile request is the worst stall of all: say why.
      if (!stopping) console.error(`the guarded server exited (${code ?? signal}): ${stderr}`);
      resolve();
    }),
  );
  const nextLine = async (timeoutMs: number): Promise<Record<string, unknown>> => {
    const deadline = Date.now() + timeoutMs;
    while (lines.length === 0) {
      if (Date.now() > deadline || child.exitCode !== null) {
        throw new Error(`the guarded server did not answer: ${stderr}`);
      }
      await Promise.race([new Promise<void>((resolve) => (waiting = resolve)), sleep(100)]);
    }
    return JSON.parse(lines.shift()!) as Record<string, unknown>;
  };
  const started = (await nextLine(START_TIMEOUT_MS)) as { url: string; key: string; parseMs: number };
  return {
    url: started.url,
    key: started.key,
    parseMs: started.parseMs,
    async holds() {
      child.kill("SIGUSR2");
      return (await nextLine(10_000)) as unknown as ServerHolds;
    },
    async stop() {
      stopping = true;
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

let dataDir: string;
let server: GuardedServer;
const sessionId = `guard-${randomUUID()}`;
let dispatcherToken: string;

const call = (path: string, init: { method?: string; body?: Body; type?: string } = {}) =>
  fetch(`${server.url}${path}`, {
    method: init.method ?? "POST",
    headers: {
      authorization: `Bearer ${server.key}`,
      ...(init.type === undefined ? {} : { "content-type": init.type }),
    },
    ...(init.body === undefined ? {} : { body: init.body, duplex: "half" }),
  } as RequestInit);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "stowage-guard-"));
  // The run's migrated embedded database: a first start's initdb is not what is measured here.
  await seedEmbeddedDatabase(dataDir);
  server = await startGuardedServer(dataDir);
  const registered = await call("/agents/sessions", {
    body: JSON.stringify({ sessionId }),
    type: "application/json",
  });
  expect(registered.status, await registered.clone().text()).toBe(201);
  const claimed = await call(`/sessions/${sessionId}/hot-state/dispatcher`);
  expect(claimed.status).toBe(201);
  dispatcherToken = ((await claimed.json()) as { dispatcher_token: string }).dispatcher_token;
});
afterAll(async () => {
  await server?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Watched extends ServerHolds {
  status: number;
  body: string;
  healthzMaxMs: number;
  /** How long this process's threads waited for a core while the request ran (ms). */
  probeWaitedForCoresMs: number;
}

/** Runs `hostile` while /healthz is probed; what it answered, and how long the server was held. */
async function whileHealthzIsProbed(hostile: () => Promise<Response>): Promise<Watched> {
  await server.holds(); // starts the measurement afresh
  const probeWaitBefore = waitingForCoreMs();
  let stop = false;
  let healthzMaxMs = 0;
  const probes = (async () => {
    while (!stop) {
      const started = performance.now();
      const answer = await fetch(`${server.url}/healthz`);
      await answer.arrayBuffer();
      healthzMaxMs = Math.max(healthzMaxMs, performance.now() - started);
      await sleep(PROBE_INTERVAL_MS);
    }
  })();
  const response = await hostile();
  const body = await response.text();
  stop = true;
  await probes;
  const probeWaitedForCoresMs = waitingForCoreMs() - probeWaitBefore;
  return { status: response.status, body, healthzMaxMs, probeWaitedForCoresMs, ...(await server.holds()) };
}

/**
 * A repeatable request watched up to three times, until one run keeps within the bounds: what a
 * request does that grows faster than its body holds the loop on every run, while a busy machine
 * (the CI's test stage runs every package at once on two cores) stretches a single whole-body
 * step only now and then. Returns the first run within the bounds, else the one that held least.
 */
async function fewestHolds(hostile: () => Promise<Response>): Promise<Watched> {
  let best: Watched | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const watched = await whileHealthzIsProbed(hostile);
    if (!best || watched.loopDelayMaxMs < best.loopDelayMaxMs) best = watched;
    if (withinBounds(watched)) return watched;
  }
  return best!;
}

const holdBound = () => Math.max(LOOP_HOLD_BOUND_MS, PARSES_PER_HOLD * server.parseMs);

/** The /healthz bound with what the machine added: both processes' waits for a core. */
const healthzBound = (watched: Watched) =>
  HEALTHZ_BOUND_MS + watched.waitedForCoresMs + watched.probeWaitedForCoresMs;

const withinBounds = (watched: Watched) =>
  watched.loopDelayMaxMs < holdBound() &&
  watched.blockedMaxMs < LOOP_HOLD_BOUND_MS &&
  watched.healthzMaxMs < healthzBound(watched);

/** A text of `length` lowercase letters without a break: the costliest kind of text to count. */
function letters(seed: number, length: number): string {
  let state = seed * 7919 + 1;
  let text = "";
  while (text.length < length) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    text += String.fromCharCode(97 + ((state >> 16) % 26));
  }
  return text;
}

/**
 * A hot state with every field and list at its schema limit (200 items of 2,000 characters in
 * each list, 200 index entries with every text at its limit): about 1.4 M characters.
 */
function maximalState(text: (seed: number, length: number) => string) {
  return {
    session_id: sessionId,
    session_key: text(1, 256),
    run_id: text(2, 256),
    current_plan_id: text(3, 256),
    objective: text(4, 2_000),
    accepted_decisions: Array.from({ length: 200 }, (_, i) => text(1_000 + i, 2_000)),
    open_questions: Array.from({ length: 200 }, (_, i) => text(2_000 + i, 2_000)),
    constraints: Array.from({ length: 200 }, (_, i) => text(3_000 + i, 2_000)),
    last_successful_step: text(5, 2_000),
    risk_level: "high",
    artifact_index: Array.from({ length: 200 }, (_, i) => ({
      artifact_id: i.toString(16).padStart(64, "0"),
      type: "doc",
      label: text(4_000 + i, 200),
      version: text(5_000 + i, 128),
      summary: text(6_000 + i, 500),
    })),
  };
}

/** Runs of one punctuation character: one pre-tokenized piece across the JSON's quotes and commas. */
const punctuation = (_seed: number, length: number) => "=".repeat(length);

/** A hot-state PUT of `body`, made before the probes start: this process stays free to probe. */
function putHotState(body: Record<string, unknown>) {
  const text = JSON.stringify(body);
  return () =>
    call(`/sessions/${sessionId}/hot-state`, { method: "PUT", body: text, type: "application/json" });
}

function expectLoopKeptFree(watched: Watched) {
  expect(
    watched.loopDelayMaxMs,
    `the longest hold of the server's event loop (CPU ms; a 14 MiB parse costs ${server.parseMs.toFixed(0)} here)`,
  ).toBeLessThan(holdBound());
  expect(watched.blockedMaxMs, "the longest synchronous wait of the server's event loop (ms)").toBeLessThan(
    LOOP_HOLD_BOUND_MS,
  );
  expect(
    watched.healthzMaxMs,
    `the slowest /healthz answer (ms; the server's threads waited ${watched.waitedForCoresMs.toFixed(0)} ms for a core, this process's ${watched.probeWaitedForCoresMs.toFixed(0)} ms)`,
  ).toBeLessThan(healthzBound(watched));
}

describe("a maximal hot state does not hold the event loop", () => {
  it("written with a wrong dispatcher token: refused (403) before anything is counted", async () => {
    const watched = await whileHealthzIsProbed(
      putHotState({ expected_version: 0, state: maximalState(letters), dispatcher_token: "not-the-token" }),
    );
    expect(watched.status, watched.body).toBe(403);
    expect(JSON.parse(watched.body)).toMatchObject({ code: "FORBIDDEN", reason: "NOT_DISPATCHER" });
    expectLoopKeptFree(watched);
  });

  it.each([
    ["letters", letters],
    ["punctuation runs", punctuation],
  ])("of %s, written with the dispatcher's token: stored, fitted", async (_, text) => {
    const latest = await call(`/sessions/${sessionId}/hot-state`, { method: "GET" });
    const expected = latest.status === 404 ? 0 : ((await latest.json()) as { version: number }).version;
    const watched = await whileHealthzIsProbed(
      putHotState({
        expected_version: expected,
        state: maximalState(text),
        dispatcher_token: dispatcherToken,
      }),
    );
    expect(watched.status, watched.body).toBe(201);
    // The constraints are never shed, and 200 of 2,000 characters are far over 1,000 tokens: only
    // the identifiers are kept.
    expect(JSON.parse(watched.body)).toMatchObject({ version: expected + 1, minimal: true, truncated: true });
    expectLoopKeptFree(watched);
  });
});

describe("prompts at the longest counted length do not hold the event loop", () => {
  // 64,000 characters (MAX_COUNTED_PROMPT_CHARS) of one run each: the costliest texts to count.
  it.each([
    ["spaces", " "],
    ["one letter", "a"],
  ])("of %s, system and user prompt both: measured and logged", async (_, character) => {
    const body = JSON.stringify({
      system_prompt: character.repeat(64_000),
      user_prompt: character.repeat(63_999),
    });
    const watched = await fewestHolds(() =>
      call(`/sessions/${sessionId}/prompt-metrics`, { body, type: "application/json" }),
    );
    expect(watched.status, watched.body).toBe(201);
    expect(JSON.parse(watched.body)).toMatchObject({ entry: { record: { sys_chars: 64_000 } } });
    expectLoopKeptFree(watched);
  });
});

describe("a thread item of 14 MiB does not hold the event loop", () => {
  // Valid items a client may post (the route takes up to STOWAGE_BODY_LIMIT_MB): the text is
  // sanitized and its secrets redacted before it is stored. Redaction read `api_key=` or PEM
  // headers repeated in time that grew with the square of their length (85 s for 400 KB), and one
  // pass over 16 MiB of text held the loop for up to 180 ms: it now reads windows of 256 KiB, a
  // shape at a time, in slices.
  const OUTPUT_CHARS = 14 * 1024 * 1024;
  const repeatedTo = (unit: string) => unit.repeat(Math.ceil(OUTPUT_CHARS / unit.length));
  it.each([
    ["letters", () => letters(7, OUTPUT_CHARS)],
    ["assignments without a value", () => repeatedTo("api_key=")],
    ["PEM headers without a footer", () => repeatedTo("-----BEGIN PRIVATE KEY----- ")],
    ["a million secrets", () => repeatedTo("token=abc12345 ")],
  ])("of %s: posted", async (_, output) => {
    const body = JSON.stringify({
      content: [{ type: "text", text: "a tool's output" }],
      metadata: { type: "tool_result", tool: { invocation_id: "t1", is_error: false, output: output() } },
    });
    // Each run posts a new item: the request repeats exactly, as every request watched by
    // fewestHolds does (a hot-state write is not: its version moves, so it is watched once).
    const watched = await fewestHolds(() =>
      call(`/threads/guard-job/items-${randomUUID()}/items`, { body, type: "application/json" }),
    );
    expect(watched.status, watched.body.slice(0, 300)).toBe(201);
    expectLoopKeptFree(watched);
  });
});

/** 15 MiB of JSON that is cheap to send and costly to parse. */
const HOSTILE_JSON: [string, () => Buffer][] = [
  [
    "nested arrays",
    () => Buffer.from(`${"[".repeat(HOSTILE_JSON_BYTES / 2)}${"]".repeat(HOSTILE_JSON_BYTES / 2)}`),
  ],
  [
    "nested objects",
    () => {
      const depth = Math.floor(HOSTILE_JSON_BYTES / 6);
      return Buffer.from(`${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`);
    },
  ],
  ["an array of empty objects", () => Buffer.from(`[${"{},".repeat(HOSTILE_JSON_BYTES / 3 - 1)}{}]`)],
  // Within the larger budgets (a hot-state PUT, an MCP message): refused for its depth, not its size.
  ["3 MiB of nested arrays", () => Buffer.from(`${"[".repeat(3 * 512 * 1024)}${"]".repeat(3 * 512 * 1024)}`)],
];

/** Every route family that reads a JSON body, with its method. */
const JSON_ROUTES: [string, string][] = [
  ["POST", "/agents/sessions"],
  ["POST", "/agents/artifacts/upload-url"],
  ["PUT", `/sessions/${sessionId}/hot-state`],
  ["POST", `/sessions/${sessionId}/prompt-metrics`],
  ["POST", "/context/bootstrap"],
  ["POST", "/context/tools/artifacts_get"],
  ["POST", "/threads/guard-job/main/items"],
  ["POST", "/requests/guard-request/session-blobs"],
  ["POST", `/mcp/sessions/${sessionId}`],
];

describe("15 MiB of hostile JSON does not hold the event loop", () => {
  const cases = JSON_ROUTES.flatMap(([method, path]) =>
    HOSTILE_JSON.map(([shape, body]) => [shape, method, path, body] as const),
  );
  it.each(cases)("%s to %s %s: refused (400 or 413)", async (_, method, path, body) => {
    const bytes = body();
    const watched = await fewestHolds(() => call(path, { method, body: bytes, type: "application/json" }));
    expect([400, 413], watched.body.slice(0, 300)).toContain(watched.status);
    expectLoopKeptFree(watched);
  });
});

describe("an oversized body", () => {
  const oversized = () => new Uint8Array(OVERSIZED_BYTES).fill(0x20);
  /** `bytes` sent without a length (chunked), 1 MiB at a time. */
  const chunked = (bytes: Uint8Array) => {
    let offset = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.subarray(offset, offset + 1024 * 1024));
        offset += 1024 * 1024;
      },
    });
  };

  it.each([
    ["with its length", (bytes: Uint8Array) => bytes],
    ["chunked", chunked],
  ])("sent %s: refused (413) without holding the event loop", async (_, send) => {
    const watched = await fewestHolds(() =>
      call("/threads/guard-job/main/items", {
        body: send(oversized()) as Body,
        type: "application/json",
      }),
    );
    expect(watched.status).toBe(413);
    expect(JSON.parse(watched.body)).toMatchObject({ code: "TOO_LARGE" });
    expectLoopKeptFree(watched);
  });

  it.each([
    ["17 MiB with its length", () => oversized() as Body],
    ["17 MiB chunked", () => chunked(oversized()) as Body],
    ["15 MiB of nested JSON", () => HOSTILE_JSON[0]![1]() as Body],
  ])("%s, refused: the next requests of a pooled client (one connection) succeed", async (_, body) => {
    const agent = new Agent({ connections: 1 });
    try {
      const refused = await undiciFetch(`${server.url}/threads/guard-job/main/items`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: body() as never,
        duplex: "half",
        dispatcher: agent,
      });
      expect([400, 413]).toContain(refused.status);
      await refused.arrayBuffer();
      // Spaced like a client's next calls: a socket the server drops a moment later fails one.
      for (let index = 0; index < 4; index++) {
        await sleep(150);
        const next = await undiciFetch(`${server.url}/healthz`, { dispatcher: agent });
        expect(next.status).toBe(200);
        await next.arrayBuffer();
      }
    } finally {
      await agent.close();
    }
  });
});
