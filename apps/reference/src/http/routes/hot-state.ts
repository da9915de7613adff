import { describeValue, StowageError } from "@stowage/core";
import {
  buildHotState,
  countTokensExactInSlices,
  createArtifactsGetTool,
  type HotStateVersion,
  measurePrompt,
  promptBudget,
  type TokenCounter,
} from "@stowage/hot-state";
import { Hono } from "hono";
import { type AppContext, type AppEnv, integerQuery, jsonBody } from "../context.js";
import { HOT_STATE_JSON_BODY, PROMPT_METRICS_JSON_BODY } from "../limits.js";
import { dispatcherTokenOf } from "./dispatcher-token.js";
import { summarizePromptMetrics } from "./prompt-metrics-summary.js";

/** The limits and warning levels `measurePrompt` uses by default, for drawing them. */
const { limits: BUDGET, warningLevels: WARNING_LEVELS } = promptBudget();

/**
 * The longest prompt text counted, in characters: 8 per token of the prompt budget (64,000). A
 * prompt that long is over the budget for any text but long runs of one character (which hot-state
 * does not count past 1,024 characters); it is recorded as not measured, which is a budget
 * violation, instead.
 */
const MAX_COUNTED_PROMPT_CHARS = 8 * BUDGET.maxPromptTokens;

/**
 * A counter of `prompts`, counted first in slices that let the server's other requests run (two
 * prompts of 64,000 spaces held the event loop for 0.2 s in one count): the exact count of each
 * prompt up to {@link MAX_COUNTED_PROMPT_CHARS}; any other text, or one whose count failed, throws,
 * which records it as not measured.
 */
async function countedPrompts(prompts: readonly string[], signal: AbortSignal): Promise<TokenCounter> {
  const counts = new Map<string, number>();
  for (const prompt of prompts) {
    if (prompt.length > MAX_COUNTED_PROMPT_CHARS || counts.has(prompt)) continue;
    try {
      counts.set(prompt, await countTokensExactInSlices(prompt, { signal }));
    } catch (err) {
      if (StowageError.is(err, "ABORTED")) throw err;
    }
  }
  return (text) => {
    const count = counts.get(text);
    if (count !== undefined) return count;
    throw new Error(
      text.length > MAX_COUNTED_PROMPT_CHARS
        ? `${text.length} characters are over the ${MAX_COUNTED_PROMPT_CHARS} this server counts`
        : "this prompt could not be counted",
    );
  };
}

/** Entries of one `GET /prompt-metrics` page unless `limit` says otherwise, and the most it accepts. */
const DEFAULT_SERIES_PAGE = 1000;
const MAX_SERIES_PAGE = 10_000;

/** The session, if it is one of the caller's registered sessions; another tenant's is NOT_FOUND. */
async function sessionOf(c: AppContext): Promise<string> {
  const sessionId = c.req.param("id") ?? "";
  if (!(await c.get("tenant").registeredSessions.has(sessionId, { signal: c.req.raw.signal }))) {
    throw new StowageError("NOT_FOUND", `no session ${describeValue(sessionId)}`);
  }
  return sessionId;
}

function optionalCount(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `${name} must be a whole number ≥ 0, got ${describeValue(value)}`,
    );
  }
  return value;
}

async function latestHotState(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const latest = await c.get("tenant").hotState.reader.latest(sessionId, { signal: c.req.raw.signal });
  if (latest === null) throw new StowageError("NOT_FOUND", `session ${sessionId} has no hot state yet`);
  return c.json(latest);
}

async function hotStateVersion(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const version = versionParam(c.req.param("version") ?? "");
  const stored = await c.get("tenant").hotState.reader.get(sessionId, version, { signal: c.req.raw.signal });
  if (stored === null)
    throw new StowageError("NOT_FOUND", `session ${sessionId} has no hot-state version ${version}`);
  return c.json(stored);
}

// The content a hot state's artifact_index refers to, one `artifacts_get` page (the caller's
// content refs only), with `text` as the viewer's reader shows it.
async function hotStateContent(c: AppContext): Promise<Response> {
  await sessionOf(c);
  const offset = integerQuery(c, "offset");
  const tool = createArtifactsGetTool({ registry: c.get("tenant").registry });
  const page = await tool.execute(
    { artifact_id: c.req.param("artifactId") ?? "", ...(offset === undefined ? {} : { offset }) },
    { signal: c.req.raw.signal },
  );
  return c.json({ ...page, text: page.content, complete: true });
}

// Makes the caller the session's dispatcher: from then on a write needs the returned token,
// which the dispatcher keeps and never hands to the agents it runs (they hold the same API key).
// With `dispatcher_token` (the holder retrying), the claim is confirmed: 200 and the same token.
async function claimDispatcher(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  // The body is optional: a first claim needs none.
  const body = c.req.header("content-type") ? ((await jsonBody(c)) as Record<string, unknown> | null) : null;
  const given = body?.dispatcher_token;
  if (given !== undefined && typeof given !== "string") {
    throw new StowageError("INVALID_INPUT", `dispatcher_token must be a string, got ${describeValue(given)}`);
  }
  const { hotState, registeredSessions } = c.get("tenant");
  const signal = c.req.raw.signal;
  const claim = await hotState.claimDispatcher(sessionId, {
    signal,
    ...(given === undefined ? {} : { token: given }),
  });
  // A claim made while the session was being deleted is taken back: it must not outlive the
  // deletion and hold the id when it is registered again.
  if (given === undefined && !(await registeredSessions.has(sessionId, { signal }))) {
    await hotState.releaseDispatcher(sessionId, { token: claim.token, signal });
    throw new StowageError("NOT_FOUND", `no session ${describeValue(sessionId)}`);
  }
  return c.json({ session_id: sessionId, dispatcher_token: claim.token }, given === undefined ? 201 : 200);
}

// Ends the claim (the holder's token in the header): the versions stay, the next dispatcher claims.
async function releaseDispatcher(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const token = dispatcherTokenOf(c);
  await c.get("tenant").hotState.releaseDispatcher(sessionId, {
    signal: c.req.raw.signal,
    ...(token === undefined ? {} : { token }),
  });
  return c.body(null, 204);
}

// The dispatcher's write: `expected_version` is the version it read (0 for the first), so a
// dispatcher that missed another's write gets CONFLICT (409) instead of overwriting it. Once
// the session's dispatcher is claimed, a write without its `dispatcher_token` is FORBIDDEN.
async function writeHotState(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const body = (await jsonBody(c, HOT_STATE_JSON_BODY)) as Record<string, unknown> | null;
  const expectedVersion = body?.expected_version;
  if (typeof expectedVersion !== "number" || !Number.isSafeInteger(expectedVersion) || expectedVersion < 0) {
    throw new StowageError(
      "INVALID_INPUT",
      `body must be { expected_version: <version read, 0 for none>, state: {…}, dispatcher_token? }, got expected_version ${describeValue(expectedVersion)}`,
    );
  }
  const token = body?.dispatcher_token;
  if (token !== undefined && typeof token !== "string") {
    throw new StowageError("INVALID_INPUT", `dispatcher_token must be a string, got ${describeValue(token)}`);
  }
  const written = await c
    .get("tenant")
    .hotState.dispatcherFor(sessionId, token === undefined ? {} : { token })
    .write(body?.state, { expectedVersion, signal: c.req.raw.signal });
  return c.json(written, 201);
}

// One model call, measured against the hot-state version it was made with (the latest when the
// caller does not say) and the budget, then logged.
async function recordPromptMetrics(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const body = (await jsonBody(c, PROMPT_METRICS_JSON_BODY)) as Record<string, unknown> | null;
  if (typeof body?.system_prompt !== "string" || typeof body.user_prompt !== "string") {
    throw new StowageError(
      "INVALID_INPUT",
      "body must be { system_prompt, user_prompt, hot_state_version?, run_id?, ref_files?, rag_chunks?, inline_artifact_chars? }",
    );
  }
  const { hotState, promptMetrics } = c.get("tenant");
  const refFiles = optionalCount(body, "ref_files");
  const ragChunks = optionalCount(body, "rag_chunks");
  const inlineArtifactChars = optionalCount(body, "inline_artifact_chars");
  const version = optionalCount(body, "hot_state_version");
  // 0: the call was made without a hot state.
  let used: HotStateVersion | null = null;
  if (version === undefined) {
    used = await hotState.reader.latest(sessionId, { signal: c.req.raw.signal });
  } else if (version > 0) {
    used = await hotState.reader.get(sessionId, version, { signal: c.req.raw.signal });
    if (used === null) {
      throw new StowageError("NOT_FOUND", `session ${sessionId} has no hot-state version ${version}`);
    }
  }
  const countTokens = await countedPrompts([body.system_prompt, body.user_prompt], c.req.raw.signal);
  const metrics = measurePrompt(
    {
      sessionId,
      ...(typeof body.run_id === "string" ? { runId: body.run_id } : {}),
      hotState: used ?? buildHotState({ session_id: sessionId }),
      systemPrompt: body.system_prompt,
      userPrompt: body.user_prompt,
      ...(refFiles === undefined ? {} : { refFiles }),
      ...(ragChunks === undefined ? {} : { ragChunks }),
      ...(inlineArtifactChars === undefined ? {} : { inlineArtifactChars }),
    },
    { countTokens },
  );
  const entry = await promptMetrics.append(metrics, {
    ...(used ? { hotStateVersion: used.version } : {}),
    signal: c.req.raw.signal,
  });
  return c.json({ entry }, 201);
}

// One page of the series: `limit` entries after `after_turn`; `next_after_turn` continues it.
async function promptMetricsPage(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const afterTurn = integerQuery(c, "after_turn");
  const limit = integerQuery(c, "limit") ?? DEFAULT_SERIES_PAGE;
  if (limit < 1 || limit > MAX_SERIES_PAGE) {
    throw new StowageError("INVALID_INPUT", `limit must be from 1 to ${MAX_SERIES_PAGE}, got ${limit}`);
  }
  // One more than the page, to know whether the series goes on.
  const read = await c.get("tenant").promptMetrics.series(sessionId, {
    ...(afterTurn === undefined ? {} : { afterTurn }),
    limit: limit + 1,
    signal: c.req.raw.signal,
  });
  const entries = read.slice(0, limit);
  return c.json({
    entries,
    summary: summarizePromptMetrics(entries),
    next_after_turn: read.length > limit ? entries.at(-1)!.turn : null,
  });
}

// What a plot or a dashboard needs: the limits, the warning levels, where the session stands
// over its whole series.
async function budgetOf(c: AppContext): Promise<Response> {
  const sessionId = await sessionOf(c);
  const { hotState, promptMetrics } = c.get("tenant");
  const [latest, entries] = await Promise.all([
    hotState.reader.latest(sessionId, { signal: c.req.raw.signal }),
    promptMetrics.series(sessionId, { signal: c.req.raw.signal }),
  ]);
  const last = entries.at(-1) ?? null;
  return c.json({
    budget: BUDGET,
    warning_levels: WARNING_LEVELS,
    hot_state: latest && {
      version: latest.version,
      tokens: latest.tokens,
      artifact_index_entries: latest.state.artifact_index?.length ?? 0,
    },
    last_turn: last,
    // The whole series: one call over budget anywhere is not "within budget".
    ok: entries.every((entry) => entry.record.budget_ok),
    last_call_ok: last === null || last.record.budget_ok,
    summary: summarizePromptMetrics(entries),
  });
}

/**
 * A session's hot state (versions written by its dispatcher, compare-and-set on the version) and
 * its prompt metrics (one entry per model call, with the budget it is checked against). Every
 * route is scoped to the caller's registered sessions.
 */
export function hotStateRoutes() {
  return new Hono<AppEnv>()
    .get("/sessions/:id/hot-state", latestHotState)
    .get("/sessions/:id/hot-state/versions/:version", hotStateVersion)
    .get("/sessions/:id/hot-state/content/:artifactId", hotStateContent)
    .post("/sessions/:id/hot-state/dispatcher", claimDispatcher)
    .delete("/sessions/:id/hot-state/dispatcher", releaseDispatcher)
    .put("/sessions/:id/hot-state", writeHotState)
    .post("/sessions/:id/prompt-metrics", recordPromptMetrics)
    .get("/sessions/:id/prompt-metrics", promptMetricsPage)
    .get("/sessions/:id/budget", budgetOf);
}

/** A version in a path: digits only (the store checks the range). */
function versionParam(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) {
    throw new StowageError("INVALID_INPUT", `version must be a whole number, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}
