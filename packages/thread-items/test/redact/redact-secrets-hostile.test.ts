import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/redact/redact-secrets.js";

// Texts a client chooses to make redaction costly: each shape's own prefix or context repeated
// to 16 MiB (the most a thread item's body may be), and runs of a token's alphabet. Each pattern
// used to scan ahead from every position (seconds per 100 KB of `api_key=` or PEM headers) or, over
// a run of megabytes, overflowed the pattern engine's stack (RangeError). Each must now come back
// redacted as the shapes say, without an error. (How long it takes is the app's event-loop guard's
// business, `apps/reference/test/event-loop-guard.test.ts`, and the bench's.)

const SIXTEEN_MIB = 16 * 1024 * 1024;
const repeated = (unit: string, length = SIXTEEN_MIB) => unit.repeat(Math.ceil(length / unit.length));

const HOSTILE: [string, string, number][] = [
  // [what, unit repeated to 16 MiB, secrets found per unit]
  ["PEM headers without a footer", "-----BEGIN PRIVATE KEY-----\n", 0],
  ["a PEM header's label words", "-----BEGIN AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA ", 0],
  ["Authorization headers without credentials", "Authorization: Bearer ", 0],
  ["assignments without a value", "api_key=", 0],
  ["quoted assignments without a value", "token: '", 0],
  ["names without an assignment", "xapi_keyxapi_keyx", 0],
  ["JWT parts without a signature", "eyJabcdefghij.eyJabcdefghij.", 0],
  ["a run of a token's alphabet", "abcdefghijklmnopqrstuvwxyz0123456789-_", 0],
  ["an OpenAI prefix over a run", "sk-proj-", 0],
  ["Slack prefixes", "xoxb-1234567890-", 0],
  ["whitespace", " \t", 0],
  ["line breaks after colons", ":\n", 0],
];

describe("redactSecrets on 16 MiB of a shape's own prefix", () => {
  it.each(HOSTILE)("%s: refused nothing, found only what is there", (_, unit) => {
    const text = repeated(unit);
    const { value, redactions, omitted } = redactSecrets({ output: text });
    // A run of a prefix is no secret, but `sk-proj-…` over a run is the shape of a key (one per
    // 4 KiB window of its alphabet at most): only such whole-shape matches are taken.
    const placeholders = value.output.match(/\[REDACTED:[a-z-]+\]/g) ?? [];
    expect(placeholders.length).toBe(redactions.length + omitted);
    if (!unit.startsWith("sk-")) expect(placeholders).toEqual([]);
  });
});

describe("redactSecrets on many secrets", () => {
  it("a million assignments are each redacted; the item lists 256 and counts the rest", () => {
    const text = repeated("token=abc12345 ");
    const count = Math.ceil(SIXTEEN_MIB / "token=abc12345 ".length);
    const { value, redactions, omitted } = redactSecrets({ output: text });
    expect(redactions).toHaveLength(256);
    expect(omitted).toBe(count - 256);
    expect(value.output).not.toContain("abc12345");
    expect(value.output.slice(0, 64)).toBe(
      "token=[REDACTED:env-assignment] token=[REDACTED:env-assignment] ",
    );
  });
});

describe("redactSecrets of a long text is read in windows, and no secret is cut in two", () => {
  // Windows of a long text end near every 256 KiB, at a line break (or a neutral character).
  // Secrets of every multi-line or spaced shape are placed across every such place.
  const filler = (length: number) => repeated("lorem ipsum dolor sit amet\n", length).slice(0, length);
  const pemBlock = [
    "-----BEGIN PRIVATE KEY-----",
    ...Array.from({ length: 20 }, () => "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"),
    "-----END PRIVATE KEY-----",
  ].join("\n");
  const SPANNING: [string, string, string, string][] = [
    // [what, the text, its kind, the text redacted]
    ["a PEM block", pemBlock, "private-key", "[REDACTED:private-key]"],
    [
      "an assignment with its value on the next line",
      "API_TOKEN:\nabc123def456",
      "env-assignment",
      "API_TOKEN:\n[REDACTED:env-assignment]",
    ],
    [
      "an indented YAML value",
      "password:\n  hunter2hunter2x9",
      "env-assignment",
      "password:\n  [REDACTED:env-assignment]",
    ],
    [
      "a header split over lines",
      "Authorization:\n Bearer\n abcdefghij0123456789",
      "authorization-header",
      "Authorization:\n Bearer\n [REDACTED:authorization-header]",
    ],
  ];
  it.each(SPANNING)("%s placed across each window's end", (_, secret, kind, redacted) => {
    const window = 256 * 1024;
    const tail = filler(window);
    for (let shift = -secret.length - 2; shift <= 2; shift += 5) {
      const head = filler(window + shift);
      const { value, redactions } = redactSecrets({ output: `${head}\n${secret}\n${tail}` });
      expect(
        redactions.map((r) => r.kind),
        `shift ${shift}`,
      ).toEqual([kind]);
      expect(value.output === `${head}\n${redacted}\n${tail}`, `shift ${shift}`).toBe(true);
    }
  });
});
