import { turnEndItem } from "../builders/build-items.js";
import type { TurnEndItem } from "../schema/thread-item-schema.js";

/** Token figures of one model call or one turn, in the thread item's terms. */
export interface TokenUsage {
  /** Total input, cached plus uncached. */
  input: number;
  /** Part of `input` read from the prompt cache. */
  cached: number;
  output: number;
}

const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;

/**
 * Anthropic usage: `input_tokens` excludes the cache, so the total adds cache reads and cache
 * writes; only reads are served from the cache.
 */
export function anthropicUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  const cached = count(fields.cache_read_input_tokens);
  return {
    input: count(fields.input_tokens) + count(fields.cache_creation_input_tokens) + cached,
    cached,
    output: count(fields.output_tokens),
  };
}

/** OpenAI usage (Codex): `input_tokens` already includes `cached_input_tokens`. */
export function openAiUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  const input = count(fields.input_tokens);
  return {
    input,
    cached: Math.min(count(fields.cached_input_tokens), input),
    output: count(fields.output_tokens),
  };
}

/**
 * pi usage (`@mariozechner/pi-ai`): `input` is the uncached part for every provider, beside
 * `cacheRead` and `cacheWrite`.
 */
export function piUsage(usage: unknown): TokenUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  const cached = count(fields.cacheRead);
  return {
    input: count(fields.input) + count(fields.cacheWrite) + cached,
    cached,
    output: count(fields.output),
  };
}

/** How {@link TurnTracker.finish} closes a turn. */
export interface TurnEndOptions {
  /** The turn's figures instead of the sum of its calls; null: the source recorded none. */
  usage?: TokenUsage | null;
  durationMs?: number;
  at?: unknown;
}

function epochMs(timestamp: unknown): number | undefined {
  if (typeof timestamp !== "string") return undefined;
  const ms = Date.parse(timestamp);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Follows one agent turn for an adapter: when it started and was last active, and the usage of
 * each model call in it (keyed, so that a call repeated on several lines counts once).
 */
export class TurnTracker {
  #open = false;
  #active = false;
  #startedAt: number | undefined;
  #lastAt: number | undefined;
  // The last activity's timestamp as written: parsed once, when the turn ends, not on every line.
  #lastSeen: unknown;
  readonly #calls = new Map<string, TokenUsage>();

  /** A turn has begun and is not finished. */
  get open(): boolean {
    return this.#open;
  }

  /** A turn is open and the agent did something in it. */
  get active(): boolean {
    return this.#open && this.#active;
  }

  /** Starts a new turn (the previous one must have been finished). */
  begin(timestamp?: unknown): void {
    this.#open = true;
    this.#active = false;
    this.#startedAt = epochMs(timestamp);
    this.#lastAt = this.#startedAt;
    this.#lastSeen = undefined;
    this.#calls.clear();
  }

  /** Records agent activity at `timestamp`, opening a turn when none is. */
  activity(timestamp?: unknown): void {
    if (!this.#open) this.begin(timestamp);
    this.#active = true;
    if (this.#startedAt === undefined) {
      this.#startedAt = epochMs(timestamp);
      this.#lastAt = this.#startedAt;
    } else if (typeof timestamp === "string") this.#lastSeen = timestamp;
  }

  /** Usage of one model call; a later report for the same key replaces the earlier one. */
  callUsage(key: string, usage: TokenUsage | undefined): void {
    if (usage) this.#calls.set(key, usage);
  }

  /**
   * Closes the turn and returns its turn_end item, or undefined when no turn with activity was open.
   * `usage` overrides the sum of the calls (a source that reports a turn total), or is null when
   * the source recorded no figures for the turn (its token fields are then null, not zeros);
   * `durationMs` overrides the time between the first and the last timestamp seen.
   */
  finish(options: TurnEndOptions = {}): TurnEndItem | undefined {
    if (!this.active) {
      this.#open = false;
      return undefined;
    }
    const at = epochMs(options.at) ?? epochMs(this.#lastSeen);
    if (at !== undefined) this.#lastAt = at;
    let usage = options.usage;
    if (usage === undefined) {
      usage = { input: 0, cached: 0, output: 0 };
      for (const call of this.#calls.values()) {
        usage.input += call.input;
        usage.cached += call.cached;
        usage.output += call.output;
      }
    }
    const measured =
      this.#startedAt !== undefined && this.#lastAt !== undefined
        ? Math.max(0, this.#lastAt - this.#startedAt)
        : null;
    const durationMs = options.durationMs !== undefined ? count(options.durationMs) : measured;
    this.#open = false;
    this.#active = false;
    this.#calls.clear();
    return turnEndItem({
      inputTokens: usage?.input ?? null,
      inputTokensCached: usage ? Math.min(usage.cached, usage.input) : null,
      outputTokens: usage?.output ?? null,
      durationMs,
    });
  }

  /** {@link finish}, as the list of items it gives: the turn_end, or nothing. */
  close(options: TurnEndOptions = {}): TurnEndItem[] {
    const ended = this.finish(options);
    return ended ? [ended] : [];
  }
}
