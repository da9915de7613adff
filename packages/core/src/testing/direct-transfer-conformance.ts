import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ObjectStore, SignedRequest } from "../object-store.js";
import { sha256Hex } from "../sha256.js";
import { loadVitest } from "./load-vitest.js";

const { expect } = await loadVitest("@stowage/core/testing");

export interface DirectTransferConformanceOptions {
  /** Reaches the store's signed URLs: the global `fetch` for a server, or one that calls an in-process handler. */
  fetch: typeof fetch;
}

interface Attempt {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

const SIGNED_SIZE_HEADERS = new Set(["content-type", "content-length"]);
/** The status of an attempt the client itself refused to send (a body that contradicts its length header). */
const NOT_SENT = 499;
/** How long an attempt may take; one the server keeps waiting on is refused (nothing is stored). */
const ATTEMPT_TIMEOUT_MS = 5_000;

function withoutHeader(headers: Record<string, string>, name: string): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([key]) => key !== name));
}

/** Flips the last character of the URL's signature parameter, whatever the backend calls it. */
function tamperedUrl(url: string): string {
  const parsed = new URL(url);
  const name = [...parsed.searchParams.keys()].find((key) => /signature/i.test(key));
  if (!name) throw new Error(`no signature parameter in ${url}`);
  const signature = parsed.searchParams.get(name)!;
  parsed.searchParams.set(name, `${signature.slice(0, -1)}${signature.endsWith("A") ? "B" : "A"}`);
  return parsed.href;
}

interface Transfer {
  /** The store of the running test. */
  store(): ObjectStore;
  /** Sends a signed request (with `body`) through the suite's `fetch`. */
  attempt(
    request: { url: string; method: string; headers: Record<string, string> },
    body?: Uint8Array,
  ): Promise<Attempt>;
}

/** Sends a request through `send`, bounded by {@link ATTEMPT_TIMEOUT_MS}, and reads its answer whole. */
async function sendAttempt(
  send: typeof fetch,
  request: { url: string; method: string; headers: Record<string, string> },
  body?: Uint8Array,
): Promise<Attempt> {
  const response = await send(request.url, {
    method: request.method,
    headers: request.headers,
    ...(body === undefined ? {} : { body }),
    // A body shorter than its length header leaves a real server waiting for the rest.
    signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS),
  });
  return {
    status: response.status,
    headers: response.headers,
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

function signUpload(
  store: ObjectStore,
  key: string,
  body: Uint8Array,
  expiresInSeconds = 300,
): Promise<SignedRequest> {
  if (!store.createUploadUrl)
    throw new Error(`${store.name} was given a fetch but has no direct upload URLs`);
  return store.createUploadUrl({
    key,
    contentType: "image/png",
    contentLength: body.byteLength,
    sha256: sha256Hex(body),
    expiresInSeconds,
  });
}

/** A signed upload of the signed bytes round-trips through a signed download. */
async function roundTrip(transfer: Transfer): Promise<void> {
  const store = transfer.store();
  const body = new Uint8Array(randomBytes(10 * 1024));
  const before = Date.now();
  const upload = await signUpload(store, "direct/shot.png", body);
  expect(upload.method).toBe("PUT");
  expect(upload.expiresAt.getTime()).toBeGreaterThanOrEqual(before + 299_000 - 1000);
  expect(upload.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + 300_000 + 1000);
  const put = await transfer.attempt(upload, body);
  expect(put.status).toBeLessThan(300);
  expect(Buffer.from((await store.get("direct/shot.png"))!).equals(body)).toBe(true);

  const download = await store.createDownloadUrl!({
    key: "direct/shot.png",
    expiresInSeconds: 300,
    disposition: "attachment",
    filename: "report é.png",
  });
  expect(download.method).toBe("GET");
  const got = await transfer.attempt(download);
  expect(got.status).toBe(200);
  expect(Buffer.from(got.bytes).equals(body)).toBe(true);
  const disposition = got.headers.get("content-disposition") ?? "";
  expect(disposition).toMatch(/^attachment;/);
  expect(disposition).toContain("filename*=UTF-8''report%20%C3%A9.png");
}

/** Every upload that differs from what was signed is refused, with nothing stored. */
async function otherUploadsRefused(transfer: Transfer): Promise<void> {
  const store = transfer.store();
  const body = new Uint8Array(randomBytes(4 * 1024));
  const upload = await signUpload(store, "direct/refused.png", body);
  const withoutLength = withoutHeader(upload.headers, "content-length");
  const checksumHeader = Object.keys(upload.headers).find((name) => !SIGNED_SIZE_HEADERS.has(name));
  expect(checksumHeader, "a URL that binds a sha256 sends it in a signed header").toBeDefined();
  const attempts: [string, Record<string, string>, Uint8Array, string?][] = [
    ["a longer body", withoutLength, new Uint8Array(body.byteLength + 1)],
    ["a shorter body", withoutLength, body.subarray(1)],
    // The same with the signed length header kept: a backend must count the bytes it receives,
    // not trust the header (one the client will not send, or the server waits out, counts as refused).
    ["a longer body under the signed length header", upload.headers, new Uint8Array(body.byteLength + 1)],
    ["a shorter body under the signed length header", upload.headers, body.subarray(1)],
    ["another content type", { ...upload.headers, "content-type": "text/html" }, body],
    [
      "another checksum header",
      {
        ...upload.headers,
        [checksumHeader!]: upload.headers[checksumHeader!]!.replace(/^./, (c) => (c === "A" ? "B" : "A")),
      },
      body,
    ],
    ["no checksum header", withoutHeader(upload.headers, checksumHeader!), body],
    ["a tampered signature", upload.headers, body, tamperedUrl(upload.url)],
  ];
  // Where the backend says it verifies the bound SHA-256 itself, other bytes of the signed length
  // must be refused too; where it does not (RGW 16), the caller verifies after the upload.
  if (store.capabilities.directUploadVerifiesSha256) {
    const other = new Uint8Array(body);
    other[0] = other[0]! ^ 0xff;
    attempts.push(["the signed length and headers with other bytes", upload.headers, other]);
  }
  for (const [why, headers, payload, url] of attempts) {
    const { status } = await transfer
      .attempt({ url: url ?? upload.url, method: "PUT", headers }, payload)
      .catch(() => ({ status: NOT_SENT }));
    expect({ why, refused: status >= 400 }).toEqual({ why, refused: true });
    expect({ why, stored: await store.head("direct/refused.png") }).toEqual({ why, stored: null });
  }
  // The URL itself still works for the exact bytes.
  expect((await transfer.attempt(upload, body)).status).toBeLessThan(300);
  expect((await store.head("direct/refused.png"))?.size).toBe(body.byteLength);
}

/** A download URL with a tampered signature or another disposition is refused. */
async function tamperedDownloadRefused(transfer: Transfer): Promise<void> {
  const store = transfer.store();
  const body = new TextEncoder().encode("secret report");
  await store.put("direct/report.txt", body);
  const download = await store.createDownloadUrl!({
    key: "direct/report.txt",
    expiresInSeconds: 300,
    disposition: "attachment",
    filename: "report.txt",
  });
  const tampered = await transfer.attempt({ ...download, url: tamperedUrl(download.url) });
  expect(tampered.status).toBeGreaterThanOrEqual(400);
  expect(Buffer.from(tampered.bytes).includes(Buffer.from(body))).toBe(false);
  // Asking for the file to be shown inline instead of downloaded is a change of what was signed.
  const inline = new URL(download.url);
  for (const [name, value] of inline.searchParams) {
    if (value.startsWith("attachment")) inline.searchParams.set(name, value.replace("attachment", "inline"));
  }
  if (inline.href !== download.url) {
    expect((await transfer.attempt({ ...download, url: inline.href })).status).toBeGreaterThanOrEqual(400);
  }
  expect((await transfer.attempt(download)).status).toBe(200);
}

/** Expired upload and download URLs are refused. */
async function expiredUrlsRefused(transfer: Transfer): Promise<void> {
  const store = transfer.store();
  const body = new TextEncoder().encode("late");
  const upload = await signUpload(store, "direct/late.png", body, 1);
  await store.put("direct/kept.png", body);
  const download = await store.createDownloadUrl!({ key: "direct/kept.png", expiresInSeconds: 1 });
  await sleep(2500);
  expect((await transfer.attempt(upload, body)).status).toBeGreaterThanOrEqual(400);
  expect(await store.head("direct/late.png")).toBeNull();
  expect((await transfer.attempt(download)).status).toBeGreaterThanOrEqual(400);
}

/** The store says whether it verifies the bound SHA-256 itself. */
async function declaresVerification(transfer: Transfer): Promise<void> {
  const store = transfer.store();
  expect(typeof store.capabilities.directUploadVerifiesSha256).toBe("boolean");
}

/**
 * The direct-transfer part of the object-store conformance suite: signed upload and download URLs
 * round-trip the exact signed bytes, and every upload that differs from what was signed (length,
 * type, checksum, signature, expiry) is refused with nothing stored.
 */
export function directTransferConformance(
  { store, test }: { store(): ObjectStore; test(title: string, body: () => Promise<void>): void },
  options: DirectTransferConformanceOptions,
): void {
  const transfer: Transfer = { store, attempt: (request, body) => sendAttempt(options.fetch, request, body) };
  test("direct transfer: a signed upload of the signed bytes round-trips through a signed download", () =>
    roundTrip(transfer));
  test("direct transfer: an upload other than the signed one is refused and stores nothing", () =>
    otherUploadsRefused(transfer));
  test("direct transfer: a download URL with a tampered signature or another disposition is refused", () =>
    tamperedDownloadRefused(transfer));
  test("direct transfer: an expired URL is refused", () => expiredUrlsRefused(transfer));
  test("direct transfer: a backend that does not verify the bound SHA-256 says so (uploads must be verified after)", () =>
    declaresVerification(transfer));
}
