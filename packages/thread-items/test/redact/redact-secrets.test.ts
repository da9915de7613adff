import { generateKeyPairSync } from "node:crypto";
import { realTranscripts } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/redact/redact-secrets.js";

const repeat = (alphabet: string, length: number) =>
  Array.from({ length }, (_, i) => alphabet[(i * 7) % alphabet.length]).join("");
const ALNUM = "A1b2C3d4E5f6G7h8J9k0LmNpQrStUvWxYz";

const pem = (type: "rsa" | "ec" | "ed25519", format: "pkcs8" | "pkcs1" | "sec1") =>
  generateKeyPairSync(
    type as "rsa",
    {
      modulusLength: 1024,
      namedCurve: "P-256",
      privateKeyEncoding: { type: format as "pkcs8", format: "pem" },
      publicKeyEncoding: { type: "spki", format: "pem" },
    } as never,
  )
    .privateKey.toString()
    .trim();

// Each value in the documented shape of its issuer: the ones named are the issuers' own published
// examples (AWS's IAM docs, Stripe's API docs, jwt.io's sample token), the others are written to
// the documented prefix, length and alphabet.
const SECRETS: [string, string][] = [
  ["aws-access-key-id", "AKIAIOSFODNN7EXAMPLE"],
  ["aws-access-key-id", "ASIAY34FZKBOKMUTVV7A"],
  ["github-token", `ghp_${repeat(ALNUM, 36)}`],
  ["github-token", `ghs_${repeat(ALNUM, 36)}`],
  ["github-token", `github_pat_11ABCDEFG0${repeat(ALNUM, 72)}`],
  ["gitlab-token", "glpat-Xk3_9aB2cD4eF6gH8iJ0"],
  ["anthropic-api-key", `sk-ant-api03-${repeat(`${ALNUM}-_`, 93)}AA`],
  ["openai-api-key", `sk-proj-${repeat(`${ALNUM}_-`, 120)}`],
  ["openai-api-key", `sk-${repeat(ALNUM, 20)}T3BlbkFJ${repeat(ALNUM, 20)}`],
  ["slack-token", "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"],
  ["stripe-key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"],
  ["stripe-key", `rk_live_${repeat(ALNUM, 99)}`],
  ["google-api-key", `AIza${repeat(`${ALNUM}_-`, 35)}`],
  ["npm-token", `npm_${repeat(ALNUM, 36)}`],
  // The key `stowage demo` printed once.
  ["stowage-api-key", "stw_afOclAbKszue_19lDbDrJbuw0nFmjNnPDekzBRN6-G22wDC5JPkJ4xjg"],
  [
    "jwt",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
  ],
  ["private-key", pem("rsa", "pkcs8")],
  ["private-key", pem("rsa", "pkcs1")],
  ["private-key", pem("ec", "sec1")],
  ["private-key", pem("ed25519", "pkcs8")],
];

describe("redactSecrets: each known shape is found, replaced by its kind, and placed", () => {
  it.each(SECRETS)("%s", (kind, secret) => {
    const text = `the tool printed: ${secret}\nand went on`;
    const { value, redactions } = redactSecrets({ metadata: { tool: { output: text } } });
    const output = value.metadata.tool.output;
    expect(output).toBe(`the tool printed: [REDACTED:${kind}]\nand went on`);
    expect(redactions).toEqual([{ kind, path: "metadata.tool.output", index: 18 }]);
    expect(JSON.stringify(value)).not.toContain(secret.slice(8, 24));
  });
});

describe("redactSecrets: secrets given a name (.env lines, exports, config, headers)", () => {
  it.each([
    // The credentials file of AWS's CLI docs, its published example secret.
    ["aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = "],
    ['export DB_PASSWORD="s3cr3t-Passw0rd"', 'export DB_PASSWORD="'],
    ["CLIENT_SECRET=9f8e7d6c5b4a3f2e1d0c", "CLIENT_SECRET="],
    ['{"apiKey": "a1b2c3d4e5f6a7b8"}', '{"apiKey": "'],
    ["password: hunter2hunter2", "password: "],
    ["Authorization: Bearer 0123456789abcdefXYZ.0123", "Authorization: Bearer "],
    ["authorization: basic dXNlcjpwYXNzd29yZDEyMw==", "authorization: basic "],
  ])("%s", (line, before) => {
    const { value, redactions } = redactSecrets({ text: line });
    expect(value.text.startsWith(`${before}[REDACTED:`)).toBe(true);
    expect(redactions).toHaveLength(1);
    expect(redactions[0]!.index).toBe(before.length);
  });
});

describe("redactSecrets: look-alikes are left alone", () => {
  it.each([
    ["a git commit", "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904"],
    ["a UUID", "session 624a4a58-b34c-462d-a70d-13421c8125a8"],
    ["a blob ref", `blob:sha256:${"ab".repeat(32)}`],
    [
      "a base64 image",
      `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk${"A".repeat(200)}`,
    ],
    ["a setting about tokens", "MAX_TOKENS=4096\nTOKEN_LIMIT=4000\nmax_output_tokens: 8192"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell placeholder, written as a .env file holds it
    ["a placeholder", "API_KEY=<your-key-here>\nPASSWORD=${DB_PASSWORD}\ntoken: changeme"],
    ["a word, not a name", "monkey=banana123 and turkey: stuffed42"],
    ["the prefix in prose", "AWS access key ids start with AKIA; GitHub's with ghp_"],
    [
      "a public key",
      "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    ],
    ["a JWT header alone", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"],
    ["an sk- word", "pip install scikit-learn sk-learn"],
    ["a redacted placeholder", "GITHUB_TOKEN=[REDACTED:github-token]"],
    ["a short password", "password: true"],
  ])("%s", (_what, text) => {
    const item = { content: [{ type: "text", text }] };
    const { value, redactions } = redactSecrets(item);
    expect(redactions).toEqual([]);
    expect(value).toBe(item);
  });
});

describe("redactSecrets: the item around the secrets", () => {
  it("walks every string of the item, keeps the input untouched and counts each secret", () => {
    const token = `ghp_${repeat(ALNUM, 36)}`;
    const item = {
      content: [{ type: "text", text: "ran a command" }],
      metadata: {
        type: "tool_call",
        tool: { name: "Bash", invocation_id: "t1", input: { command: `curl -H 'x: ${token}' ${token}` } },
      },
    };
    const before = structuredClone(item);
    const { value, redactions } = redactSecrets(item);
    expect(item).toEqual(before);
    expect(value.metadata.tool.input.command).toBe(
      "curl -H 'x: [REDACTED:github-token]' [REDACTED:github-token]",
    );
    expect(redactions).toEqual([
      { kind: "github-token", path: "metadata.tool.input.command", index: 12 },
      { kind: "github-token", path: "metadata.tool.input.command", index: 37 },
    ]);
    expect(value.content).toBe(item.content);
  });

  it("an export of a known token is named by the token's kind, once", () => {
    const token = `ghp_${repeat(ALNUM, 36)}`;
    const { value, redactions } = redactSecrets({ text: `export GITHUB_TOKEN=${token}` });
    expect(value.text).toBe("export GITHUB_TOKEN=[REDACTED:github-token]");
    expect(redactions).toEqual([{ kind: "github-token", path: "text", index: 20 }]);
  });
});

const real = realTranscripts("redaction of real transcripts");
// Skipped, not empty, where the transcripts are absent (a clone without shared/ beside it): vitest
// fails a suite that declares no test. realTranscripts prints why (and throws in CI).
describe.skipIf(!real.present)("redactSecrets on what real agents wrote", () => {
  it.each(real.files())("%s: tool outputs, code and ids of a real session are no secrets", (file) => {
    // These sessions hold no credentials (their README says where they come from): everything in
    // them is a look-alike, hashes, uuids, base64 images and code that talks about tokens included.
    expect(redactSecrets({ text: real.read(file) }).redactions).toEqual([]);
  });
});
