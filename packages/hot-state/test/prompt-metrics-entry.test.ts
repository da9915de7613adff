// What every PromptMetricsLog shares: entries checked by `toPromptMetricsEntry` and `series` windows
// by `promptMetricsSeriesWindow` (`@stowage/hot-state/backend`). The logs themselves are tested
// where they live (`@stowage/storage-postgres/metrics`).
import { HOSTILE_KEYS } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { promptMetricsSeriesWindow, toPromptMetricsEntry } from "../src/backend.js";
import type { PromptMetrics } from "../src/index.js";
import { measuredCall as call } from "./measured-call.js";

const FIXED = new Date("2026-11-23T04:00:00.000Z");
const INVALID_INPUT = expect.objectContaining({ code: "INVALID_INPUT" });

describe("prompt metrics entries: hostile inputs", () => {
  const place = { turn: 1, recordedAt: FIXED };
  const hostileSessions = [
    ...HOSTILE_KEYS,
    { value: "a/b", why: "a key, not an id" },
    { value: ".hidden", why: "hidden name" },
    { value: "x".repeat(129), why: "over 128 characters" },
  ];
  it.each(hostileSessions)("refuses session id $why", ({ value }) => {
    const metrics = call("s", 1);
    const named = { ...metrics, record: { ...metrics.record, session: value as string } };
    expect(() => toPromptMetricsEntry(named, place)).toThrowError(INVALID_INPUT);
  });

  it.each([
    { value: -1, why: "negative" },
    { value: 1.5, why: "fractional" },
    { value: Number.NaN, why: "NaN" },
    { value: "1", why: "a string" },
    { value: null, why: "null" },
  ])("refuses afterTurn $why", ({ value }) => {
    expect(() => promptMetricsSeriesWindow({ afterTurn: value as number })).toThrowError(INVALID_INPUT);
  });

  it.each([0, -1, 1.5, Number.NaN, "5"])("refuses limit %j", (value) => {
    expect(() => promptMetricsSeriesWindow({ limit: value as number })).toThrowError(INVALID_INPUT);
  });

  it("reads the whole series without a window", () => {
    expect(promptMetricsSeriesWindow()).toEqual({ afterTurn: 0, limit: Number.POSITIVE_INFINITY });
  });

  it.each([0, -3, 1.5, Number.NaN, "2"])("refuses hotStateVersion %s", (value) => {
    expect(() =>
      toPromptMetricsEntry(call("s", 1), { ...place, hotStateVersion: value as number }),
    ).toThrowError(INVALID_INPUT);
  });

  it.each([
    { value: new Date(Number.NaN), why: "an invalid date" },
    { value: new Date("+010000-01-01T00:00:00.000Z"), why: "a year past 9999" },
    { value: "2026-11-23", why: "a string, not a Date" },
  ])("refuses a time that is $why", ({ value }) => {
    expect(() => toPromptMetricsEntry(call("s", 1), { turn: 1, recordedAt: value as Date })).toThrowError(
      INVALID_INPUT,
    );
  });

  it("refuses what is not a measurePrompt result", () => {
    for (const metrics of [
      null,
      {},
      { record: { session: "s" } },
      { ...call("s", 1), record: { ...call("s", 1).record, hs_tokens: -1 } },
      // Past PostgreSQL's integer: refused by every log, so that every log keeps the same records.
      { ...call("s", 1), record: { ...call("s", 1).record, est_tokens: 3_000_000_000 } },
    ]) {
      expect(() => toPromptMetricsEntry(metrics as PromptMetrics, place)).toThrowError(INVALID_INPUT);
    }
  });

  it("builds the entry of a turn: the record with its warnings and violations beside it", () => {
    const metrics = call("sess-1", 10, { maxPromptTokens: 1 });
    expect(toPromptMetricsEntry(metrics, { turn: 3, recordedAt: FIXED, hotStateVersion: 2 })).toEqual({
      type: "prompt_metrics_entry",
      session: "sess-1",
      turn: 3,
      recorded_at: FIXED.toISOString(),
      hot_state_version: 2,
      record: metrics.record,
      warnings: metrics.warnings,
      violations: [expect.objectContaining({ field: "maxPromptTokens", limit: 1, kind: "exceeded" })],
    });
  });
});
